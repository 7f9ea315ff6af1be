package arcql

import (
	"strconv"
	"strings"

	"github.com/corehq/core/internal/whole"
)

// Bind checks a parsed query against the schema for record type typ and
// returns a new, typed query; q is not modified (a nil q binds as the empty
// query). instanceID is the id of the
// instance the query runs in, which core.instanceId compares against.
//
// In the bound query:
//   - every path names a field of its type (else an *Error "unknown field
//     Book.titel"), and no path reaches a hidden field;
//   - metadata paths are the single part "core.id", "core.created", …;
//   - comparisons with core.instanceId are folded to *All or Never;
//   - a path through a reference field is a *Hop whose Sub is bound in the
//     target type; `!=` and `= null` across a hop become NOT over the hop,
//     so that "no element equals" keeps its meaning;
//   - `f = null` is NOT EXIST f and `f != null` is EXIST f: no Compare
//     carries a null Value;
//   - literals have the field's type: numbers for Int and Float fields,
//     booleans for Boolean fields, KindTime (Time in UTC, Str its canonical
//     RFC 3339 text) for timestamp fields, strings for String, ID, Enum and
//     reference fields;
//   - *All terms are dropped from And, Never terms from Or, and a filter
//     that is *All becomes nil.
//
// Sort keys are bound too; they may not cross a reference nor name a list,
// object or hidden field. Every error is an *Error.
func Bind(q *Query, s Schema, typ string, instanceID string) (*Query, error) {
	return (&binder{schema: s, instanceID: instanceID}).query(q, typ)
}

// BindRule binds an access rule of record type typ: a filter like any
// other (Bind), which may also compare fields with the parameters $caller
// (an ID, String or reference field, with = or !=) and $now (a DateTime
// field, with =, !=, <, <=, >, >= or IN). The bound rule keeps them as
// KindParam values; WithParams gives them their values per request. A rule
// is the same in every instance, so core.instanceId compares with no
// instance (it never matches) and a rule has no sort.
func BindRule(q *Query, s Schema, typ string) (Expr, error) {
	if q != nil && len(q.Sort) > 0 {
		return nil, errorAt(q.Sort[0].Path.Pos, "an access rule cannot SORT")
	}
	out, err := (&binder{schema: s, params: true}).query(q, typ)
	if err != nil {
		return nil, err
	}
	if out.Filter == nil {
		return &All{}, nil
	}
	return out.Filter, nil
}

func (b *binder) query(q *Query, typ string) (*Query, error) {
	out := &Query{}
	if q == nil {
		return out, nil
	}
	if q.Filter != nil {
		f, err := b.expr(typ, q.Filter)
		if err != nil {
			return nil, err
		}
		if _, all := f.(*All); !all {
			out.Filter = f
		}
	}
	for _, k := range q.Sort {
		r, err := b.resolve(typ, k.Path, true)
		if err != nil {
			return nil, err
		}
		if r.meta == "core.instanceId" {
			continue // the same for every record: it orders nothing
		}
		out.Sort = append(out.Sort, SortKey{Path: Path{Parts: r.parts, Pos: k.Path.Pos}, Desc: k.Desc})
	}
	return out, nil
}

// Never returns an expression that matches no record. Bind folds a
// comparison that can never hold (such as core.instanceId with another
// instance's id) to it.
func Never() Expr { return &Not{X: &All{}} }

func isNever(e Expr) bool {
	n, ok := e.(*Not)
	if !ok {
		return false
	}
	_, all := n.X.(*All)
	return all
}

func isAll(e Expr) bool {
	_, all := e.(*All)
	return all
}

type binder struct {
	schema     Schema
	instanceID string
	params     bool // $caller and $now are allowed (BindRule)
	hops       int  // the references crossed above the path being bound
}

func (b *binder) expr(typ string, e Expr) (Expr, error) {
	switch e := e.(type) {
	case nil, *All:
		return &All{}, nil
	case *And:
		terms := make([]Expr, 0, len(e.Terms))
		for _, t := range e.Terms {
			x, err := b.expr(typ, t)
			if err != nil {
				return nil, err
			}
			if isNever(x) {
				return Never(), nil
			}
			if !isAll(x) {
				terms = append(terms, x)
			}
		}
		switch len(terms) {
		case 0:
			return &All{}, nil
		case 1:
			return terms[0], nil
		}
		return &And{Terms: terms}, nil
	case *Or:
		terms := make([]Expr, 0, len(e.Terms))
		for _, t := range e.Terms {
			x, err := b.expr(typ, t)
			if err != nil {
				return nil, err
			}
			if isAll(x) {
				return &All{}, nil
			}
			if !isNever(x) {
				terms = append(terms, x)
			}
		}
		switch len(terms) {
		case 0:
			return Never(), nil
		case 1:
			return terms[0], nil
		}
		return &Or{Terms: terms}, nil
	case *Not:
		x, err := b.expr(typ, e.X)
		if err != nil {
			return nil, err
		}
		return not(x), nil
	case *Exist:
		return b.at(typ, e.Path, func(r resolved) (Expr, error) {
			if r.meta == "core.instanceId" {
				return &All{}, nil
			}
			return &Exist{Path: r.path(e.Path.Pos)}, nil
		})
	case *Compare:
		return b.compare(typ, e)
	case *Range:
		return b.rangeExpr(typ, e)
	case *Hop, *InIDs:
		// Already bound (a store re-binding its own output); nothing to check.
		return e, nil
	}
	return nil, &Error{Msg: "unknown expression node"}
}

// not negates x, folding the constants.
func not(x Expr) Expr {
	switch {
	case isAll(x):
		return Never()
	case isNever(x):
		return &All{}
	}
	return &Not{X: x}
}

func (b *binder) compare(typ string, c *Compare) (Expr, error) {
	if c.Value.Kind == KindNull {
		switch c.Op {
		case OpEq:
			x, err := b.expr(typ, &Exist{Path: c.Path})
			if err != nil {
				return nil, err
			}
			return not(x), nil
		case OpNe:
			return b.expr(typ, &Exist{Path: c.Path})
		}
		return nil, errorAt(c.Value.Pos, "null can only be compared with = or !=, not '%s'", c.Op)
	}
	if c.Op == OpNe {
		// Across a hop, "no element equals" is NOT over the hop; without
		// one, OpNe stays (it means the same and stores have it natively).
		r, err := b.resolve(typ, c.Path, false)
		if err != nil {
			return nil, err
		}
		if r.hop {
			eq := *c
			eq.Op = OpEq
			x, err := b.compare(typ, &eq)
			if err != nil {
				return nil, err
			}
			return not(x), nil
		}
	}
	return b.at(typ, c.Path, func(r resolved) (Expr, error) {
		v, err := b.literal(r, c.Op, c.Value)
		if err != nil {
			return nil, err
		}
		bound := &Compare{Path: r.path(c.Path.Pos), Op: c.Op, Value: v}
		if r.meta == "core.instanceId" {
			return b.fold(bound), nil
		}
		return bound, nil
	})
}

func (b *binder) rangeExpr(typ string, rg *Range) (Expr, error) {
	return b.at(typ, rg.Path, func(r resolved) (Expr, error) {
		lo, err := b.literal(r, OpGe, rg.Lo)
		if err != nil {
			return nil, err
		}
		hi, err := b.literal(r, OpLe, rg.Hi)
		if err != nil {
			return nil, err
		}
		bound := &Range{Path: r.path(rg.Path.Pos), Lo: lo, Hi: hi, LoIncl: rg.LoIncl, HiIncl: rg.HiIncl}
		if r.meta == "core.instanceId" {
			return b.fold(bound), nil
		}
		return bound, nil
	})
}

// fold evaluates a test of core.instanceId, which is the same for every
// record of the query, to *All or Never.
func (b *binder) fold(e Expr) Expr {
	if Match(e, instanceValuer(b.instanceID)) {
		return &All{}
	}
	return Never()
}

// instanceValuer answers only core.instanceId.
type instanceValuer string

func (v instanceValuer) Value(name string) (any, bool) {
	return string(v), name == "core.instanceId"
}

// at binds path p of type typ and builds the expression at its end with
// leaf; where the path crosses a reference it wraps the rest, bound in the
// target type, in a *Hop.
func (b *binder) at(typ string, p Path, leaf func(resolved) (Expr, error)) (Expr, error) {
	r, err := b.resolve(typ, p, false)
	if err != nil {
		return nil, err
	}
	if !r.hop {
		return leaf(r)
	}
	if b.hops >= MaxHops {
		return nil, errorAt(p.Pos, "a path may cross at most %d references; %s crosses more", MaxHops, r.label)
	}
	b.hops++
	sub, err := b.at(r.target, Path{Parts: r.rest, Pos: p.Pos}, leaf)
	b.hops--
	if err != nil {
		return nil, err
	}
	if isNever(sub) {
		return Never(), nil // no referenced record can match
	}
	return &Hop{Field: strings.Join(r.parts, "."), List: r.list, Target: r.target, Sub: sub}, nil
}

// resolved is a path checked against the schema: either a leaf in the
// record itself, or (hop) a reference to cross with the rest of the path.
type resolved struct {
	parts []string // the bound local path; metadata is one part
	field Field    // the field at the end of parts
	label string   // Type.field, for messages
	meta  string   // the metadata name, when the path is core.x
	list  bool     // some field on the way is a list
	json  bool     // the end is at or below a Json field

	hop    bool
	target string   // hop: the referenced type
	rest   []string // hop: the path inside the referenced type
}

func (r resolved) path(pos Pos) Path { return Path{Parts: r.parts, Pos: pos} }

// metadata are the metadata fields every type has, with their kinds; a
// Schema may answer them itself (and so hide one).
var metadata = map[string]FieldKind{
	"core.id":         FieldID,
	"core.created":    FieldTime,
	"core.updated":    FieldTime,
	"core.trashed":    FieldTime,
	"core.createdBy":  FieldID,
	"core.instanceId": FieldID,
}

// resolve checks path p in type typ. For a sort key (sorting) it also
// refuses what cannot be sorted on.
func (b *binder) resolve(typ string, p Path, sorting bool) (resolved, error) {
	verb := "filtered"
	if sorting {
		verb = "sorted on"
	}
	parts := p.Parts
	if len(parts) == 0 {
		return resolved{}, errorAt(p.Pos, "empty field path")
	}
	if parts[0] == "core" && len(parts) >= 2 {
		name := "core." + parts[1]
		f, ok := b.schema.Field(typ, name)
		if !ok {
			kind, known := metadata[name]
			if !known {
				return resolved{}, errorAt(p.Pos, "unknown field %s.%s", typ, name)
			}
			f = Field{Kind: kind}
		}
		label := typ + "." + name
		if f.Hidden {
			return resolved{}, errorAt(p.Pos, "field %s cannot be %s", label, verb)
		}
		if len(parts) > 2 {
			return resolved{}, errorAt(p.Pos, "unknown field %s.%s", typ, strings.Join(parts, "."))
		}
		return resolved{parts: []string{name}, field: f, label: label, meta: name}, nil
	}
	r := resolved{}
	cur := typ
	for i, part := range parts {
		f, ok := b.schema.Field(cur, part)
		if !ok {
			return resolved{}, errorAt(p.Pos, "unknown field %s.%s", cur, part)
		}
		r.label = cur + "." + part
		if f.Hidden {
			return resolved{}, errorAt(p.Pos, "field %s cannot be %s", r.label, verb)
		}
		r.parts = append(r.parts, part)
		r.field = f
		r.list = r.list || f.List
		last := i == len(parts)-1
		switch f.Kind {
		case FieldObject:
			if last {
				if sorting {
					return resolved{}, errorAt(p.Pos, "field %s is an object and cannot be sorted on", r.label)
				}
				return r, nil
			}
			cur = f.Target
			continue
		case FieldJSON:
			// Below a Json value nothing is declared, so anything goes.
			r.parts = append(r.parts, parts[i+1:]...)
			r.json = true
			return r, b.sortable(r, p, sorting)
		case FieldRef:
			if last {
				return r, b.sortable(r, p, sorting)
			}
			if sorting {
				return resolved{}, errorAt(p.Pos, "cannot sort on %s: SORT cannot follow the reference %s", strings.Join(parts, "."), r.label)
			}
			r.hop, r.target, r.rest = true, f.Target, parts[i+1:]
			return r, nil
		}
		if !last {
			return resolved{}, errorAt(p.Pos, "unknown field %s.%s", cur, strings.Join(parts[i:], "."))
		}
	}
	return r, b.sortable(r, p, sorting)
}

// sortable refuses a list as a sort key: it has no one value to sort by,
// and stores would disagree on which element to use.
func (b *binder) sortable(r resolved, p Path, sorting bool) error {
	if sorting && r.list {
		return errorAt(p.Pos, "cannot sort on %s: it is a list", strings.Join(p.Parts, "."))
	}
	return nil
}

// kindName names a field kind in messages.
func kindName(k FieldKind) string {
	switch k {
	case FieldString:
		return "a String"
	case FieldID:
		return "an ID"
	case FieldInt:
		return "an Int"
	case FieldFloat:
		return "a Float"
	case FieldBoolean:
		return "a Boolean"
	case FieldTime:
		return "a DateTime"
	case FieldEnum:
		return "an enum"
	case FieldJSON:
		return "Json"
	case FieldObject:
		return "an object"
	case FieldRef:
		return "a reference"
	}
	return "of kind " + strconv.Itoa(int(k))
}

// literal types the (non-null) value v for the field of r under operator
// op, following "Typing" in docs/arcql.md.
func (b *binder) literal(r resolved, op Op, v Value) (Value, error) {
	if v.Kind == KindNull {
		return Value{}, errorAt(v.Pos, "a range bound cannot be null")
	}
	kind := r.field.Kind
	if r.json {
		kind = FieldJSON
	}
	if v.Kind == KindParam {
		return b.param(r, kind, op, v)
	}
	if op == OpWords || op == OpPrefix || op == OpWildcard {
		return b.textLiteral(r, kind, op, v)
	}
	ordered := op != OpEq && op != OpNe
	switch kind {
	case FieldJSON:
		return v, nil
	case FieldObject:
		return Value{}, errorAt(v.Pos, "field %s is an object: compare one of its fields, or test it with EXIST", r.label)
	case FieldBoolean:
		if ordered {
			return Value{}, errorAt(v.Pos, "field %s is a Boolean and has no order: use = or !=", r.label)
		}
		switch {
		case v.Kind == KindBool:
			return v, nil
		case v.Kind == KindString && strings.EqualFold(v.Str, "true"):
			return Value{Kind: KindBool, Bool: true, Pos: v.Pos}, nil
		case v.Kind == KindString && strings.EqualFold(v.Str, "false"):
			return Value{Kind: KindBool, Pos: v.Pos}, nil
		}
		return Value{}, errorAt(v.Pos, "field %s is a Boolean; %s is not true or false", r.label, describeValue(v))
	case FieldInt, FieldFloat:
		switch v.Kind {
		case KindNumber:
			return v, nil
		case KindString:
			if isNumberText(v.Str) {
				if n, err := strconv.ParseFloat(v.Str, 64); err == nil {
					i, isInt := whole.BeyondFloat(v.Str)
					return Value{Kind: KindNumber, Num: n, Int: i, IsInt: isInt, Str: v.Str, Pos: v.Pos}, nil
				}
			}
		}
		return Value{}, errorAt(v.Pos, "field %s is %s; %s is not a number", r.label, kindName(kind), describeValue(v))
	case FieldTime:
		if v.Kind == KindString {
			t, err := parseTime(v.Str)
			if err == nil {
				return Value{Kind: KindTime, Time: t, Str: canonicalTime(t), Pos: v.Pos}, nil
			}
		}
		return Value{}, errorAt(v.Pos, "field %s is a DateTime; %s is not an ISO-8601 timestamp such as '2026-01-01T00:00:00Z'", r.label, describeValue(v))
	}
	// String, ID, Enum, and a reference compared by its stored id.
	return stringLiteral(r, kind, v)
}

// param checks a parameter where a literal stands: only in a rule, only
// $caller and $now, each with the fields and operators it suits.
func (b *binder) param(r resolved, kind FieldKind, op Op, v Value) (Value, error) {
	if !b.params {
		return Value{}, errorAt(v.Pos, "$%s is a parameter of access rules; a filter cannot use parameters", v.Str)
	}
	switch v.Str {
	case "caller":
		if kind != FieldID && kind != FieldString && kind != FieldRef {
			return Value{}, errorAt(v.Pos, "$caller is an account id and cannot be compared with %s, which is %s", r.label, kindName(kind))
		}
		if op != OpEq && op != OpNe {
			return Value{}, errorAt(v.Pos, "$caller can only be compared with = or !=, not '%s'", op)
		}
	case "now":
		if kind != FieldTime {
			return Value{}, errorAt(v.Pos, "$now is a timestamp and cannot be compared with %s, which is %s", r.label, kindName(kind))
		}
		if op != OpEq && op != OpNe && op != OpLt && op != OpLe && op != OpGt && op != OpGe {
			return Value{}, errorAt(v.Pos, "$now cannot be used with '%s'", op)
		}
	default:
		return Value{}, errorAt(v.Pos, "unknown parameter $%s: a rule knows $caller and $now", v.Str)
	}
	return v, nil
}

// textLiteral types the value of ~, ^ and *, which look at text.
func (b *binder) textLiteral(r resolved, kind FieldKind, op Op, v Value) (Value, error) {
	if kind == FieldBoolean || kind == FieldObject {
		return Value{}, errorAt(v.Pos, "operator '%s' needs a text field; %s is %s", op, r.label, kindName(kind))
	}
	if v.Kind != KindString && v.Kind != KindNumber {
		return Value{}, errorAt(v.Pos, "operator '%s' needs a string, found %s", op, describeValue(v))
	}
	v, err := stringLiteral(r, kind, v)
	if err != nil {
		return Value{}, err
	}
	if op == OpWords {
		if w, _ := nextWord(v.Str); w == "" {
			return Value{}, errorAt(v.Pos, "operator '~' needs at least one word (letters or digits), found %s", describeValue(v))
		}
	}
	return v, nil
}

// stringLiteral makes v a string: a number becomes the text it was written
// as.
func stringLiteral(r resolved, kind FieldKind, v Value) (Value, error) {
	switch v.Kind {
	case KindString:
		return v, nil
	case KindNumber:
		text := v.Str
		if text == "" {
			text = strconv.FormatFloat(v.Num, 'f', -1, 64)
		}
		return Value{Kind: KindString, Str: text, Pos: v.Pos}, nil
	}
	return Value{}, errorAt(v.Pos, "field %s is %s; %s is not a string", r.label, kindName(kind), describeValue(v))
}

// describeValue shows a literal in a message, as it would be written.
func describeValue(v Value) string {
	var b strings.Builder
	writeValue(&b, v)
	return b.String()
}
