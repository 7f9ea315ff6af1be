package arcql

import "github.com/corehq/core/internal/defaults"

// Limits bound what Parse accepts, so that no query can make a store do
// unbounded work. Over a limit Parse returns an *Error naming it. A zero (or
// negative) field means the default for that limit.
type Limits struct {
	// MaxBytes is the longest query text, in bytes.
	MaxBytes int
	// MaxDepth is the deepest nesting of parentheses and NOTs.
	MaxDepth int
	// MaxComparisons is the most comparisons (including EXIST and IN).
	MaxComparisons int
	// MaxStringBytes is the longest string literal, in bytes once decoded.
	MaxStringBytes int
	// MaxWildcards is the most '*' in one wildcard pattern.
	MaxWildcards int
}

// DefaultLimits are the limits of docs/arcql.md: 4 KiB of text, 32 levels of
// nesting, 100 comparisons, 1 KiB strings and 10 '*' per pattern.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:       4096,
		MaxDepth:       32,
		MaxComparisons: 100,
		MaxStringBytes: 1024,
		MaxWildcards:   10,
	}
}

// withDefaults fills the zero fields of l from DefaultLimits.
func (l Limits) withDefaults() Limits { return defaults.Fill(l, DefaultLimits()) }

// MaxHops is the most references one path of a filter or an access rule
// may cross (`board.team.colleagues.core.id` crosses three): each crossing
// is a sub-query, so a path may not chain them without bound.
const MaxHops = 4
