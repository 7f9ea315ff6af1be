package arcql

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Query is a parsed ArcQL text: an optional filter and sort keys.
type Query struct {
	// Filter is nil for an empty query or "*".
	Filter Expr
	Sort   []SortKey
}

// Pos is a 1-based line and column in the query text.
type Pos struct{ Line, Col int }

// Expr is a filter expression node. The concrete types are *And, *Or,
// *Not, *All, *Exist, *Compare, *Range, *Hop and *InIDs.
type Expr interface{ exprNode() }

// And matches when every term matches.
type And struct{ Terms []Expr }

// Or matches when some term matches.
type Or struct{ Terms []Expr }

// Not matches when X does not.
type Not struct{ X Expr }

// All matches every record ("*").
type All struct{}

// Exist matches when the field at Path is present and not null (an empty
// list counts as absent).
type Exist struct {
	Path Path
}

// Op is a comparison operator.
type Op int

const (
	OpEq       Op = iota // =
	OpNe                 // !=
	OpLt                 // <
	OpLe                 // <=
	OpGt                 // >
	OpGe                 // >=
	OpWords              // ~  every word occurs, case-insensitive
	OpPrefix             // ^  starts with, case-sensitive
	OpWildcard           // *  whole-value wildcard: * any run, ? one character
)

// Compare matches `Path Op Value`.
type Compare struct {
	Path  Path
	Op    Op
	Value Value
}

// Range matches `Path IN [Lo, Hi]` with each bound inclusive or exclusive.
type Range struct {
	Path           Path
	Lo, Hi         Value
	LoIncl, HiIncl bool
}

// Hop is produced by Bind for a path that crosses a reference field:
// it matches records whose reference Field (single or list) points at some
// record of type Target that Sub matches. A store resolves it with a bounded
// sub-query into an *InIDs before evaluating (see store.ResolveHops).
type Hop struct {
	Field  string
	List   bool
	Target string
	Sub    Expr
}

// InIDs matches records whose Field (a reference, a list reference,
// "core.id" or "core.createdBy") holds one of IDs. Produced from a Hop,
// and by access rights. Build a long one with NewInIDs, which Match then
// answers with one lookup instead of a scan of IDs.
type InIDs struct {
	Field string
	IDs   []string
	// Set holds IDs again for lookups, when NewInIDs made it (many IDs);
	// nil: Match scans IDs.
	Set map[string]struct{}
	// Digest names IDs in a few bytes where NewInIDs made Set: the hex
	// SHA-256 of the ids. Format writes it instead of the ids, so that a
	// long list costs its text once, not at every query.
	Digest string
}

// NewInIDs returns an InIDs whose IDs Match looks up in a set when there
// are many. The result is read-only: Match may run on it concurrently.
func NewInIDs(field string, ids []string) *InIDs {
	in := &InIDs{Field: field, IDs: ids}
	if len(ids) > 16 {
		in.Set = make(map[string]struct{}, len(ids))
		h := sha256.New()
		for _, id := range ids {
			in.Set[id] = struct{}{}
			h.Write([]byte(id))
			h.Write([]byte{0})
		}
		in.Digest = hex.EncodeToString(h.Sum(nil))
	}
	return in
}

func (*And) exprNode()     {}
func (*Or) exprNode()      {}
func (*Not) exprNode()     {}
func (*All) exprNode()     {}
func (*Exist) exprNode()   {}
func (*Compare) exprNode() {}
func (*Range) exprNode()   {}
func (*Hop) exprNode()     {}
func (*InIDs) exprNode()   {}

// Path is a dotted field path. After Bind, Parts[0] is a field name of the
// queried type or a metadata name such as "core.id" (kept as one part), and
// further parts descend into an embedded object or Json value.
type Path struct {
	Parts []string
	Pos   Pos
}

// String is the path as written, dot-joined.
func (p Path) String() string {
	s := ""
	for i, part := range p.Parts {
		if i > 0 {
			s += "."
		}
		s += part
	}
	return s
}

// Kind is the kind of a literal value.
type Kind int

const (
	KindNull Kind = iota
	KindString
	KindNumber
	KindBool
	KindTime  // produced by Bind for timestamp fields
	KindParam // a parameter ($caller, $now): Str is its name; see BindRule
)

// Value is a literal.
type Value struct {
	Kind Kind
	Str  string
	Num  float64
	// Int is the literal exactly when IsInt: a whole number float64
	// cannot hold (beyond 2^53), compared as an int64 (a Long).
	Int   int64
	IsInt bool
	Bool  bool
	Time  time.Time
	Pos   Pos
}

// SortKey orders results by the field at Path; ties break by id ascending.
type SortKey struct {
	Path Path
	Desc bool
}

// FieldKind is the kind of a schema field as the filter language sees it.
type FieldKind int

const (
	FieldString FieldKind = iota
	FieldID
	FieldInt
	FieldFloat
	FieldBoolean
	FieldTime // DateTime fields and core.created/updated/trashed
	FieldEnum
	FieldJSON   // any value; paths below it are not checked
	FieldObject // an embedded object of type Target
	FieldRef    // a reference to a record of type Target
)

// Field describes one field for binding.
type Field struct {
	Kind   FieldKind
	List   bool
	Target string // FieldObject / FieldRef: the type it leads to
	// Hidden fields (secrets such as Account.password) may not be filtered
	// or sorted on: a filter must never act as an oracle on a hidden value.
	Hidden bool
}

// Schema is what Bind needs to know of the record types. Field must also
// answer the metadata names "core.id", "core.created", "core.updated",
// "core.trashed", "core.createdBy", "core.instanceId" for every type.
type Schema interface {
	Field(typ, name string) (Field, bool)
}

// Valuer gives the evaluator a record's values. Value("core.id") and the
// other metadata names answer metadata; other names answer fields.
type Valuer interface {
	Value(name string) (any, bool)
}
