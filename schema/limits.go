package schema

import "github.com/corehq/core/internal/defaults"

// Limits bound the work Parse does on an uploaded SDL, which comes from an
// untrusted developer. The byte limit is checked before any parsing and the
// token limit while parsing, so an oversized upload is refused in time
// proportional to the limit, not to the upload.
type Limits struct {
	// MaxBytes is the largest SDL text accepted, in bytes.
	MaxBytes int
	// MaxTokens is the most lexical tokens the parser reads (comments
	// included) before giving up.
	MaxTokens int
	// MaxTypes is the most type definitions (of any kind: type, input, enum,
	// scalar; `type Query` and `type Mutation` included; `extend` clauses
	// not counted) the SDL may declare.
	MaxTypes int
	// MaxFieldsPerType is the most fields a type or input may have (the
	// definition and its extensions together), the most values an enum may
	// have, and the most root fields Query or Mutation may have.
	MaxFieldsPerType int
}

// DefaultLimits are the limits the admin API applies: 256 KiB, 50,000
// tokens, 500 types, 200 fields per type.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:         256 << 10,
		MaxTokens:        50_000,
		MaxTypes:         500,
		MaxFieldsPerType: 200,
	}
}

// orDefault replaces every zero (or negative) limit by its default, so that
// Limits{} never means "unlimited" by accident.
func (l Limits) orDefault() Limits { return defaults.Fill(l, DefaultLimits()) }
