package gql

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
)

// mathOperands are the operations of Hypi's math, in the order they
// apply (division, multiplication, subtraction, addition).
var mathOperands = [...]string{"div", "times", "minus", "plus"}

// maxMathValues bounds the entries of one math call, like a batch of
// upserts.
const maxMathValues = 1000

// maxDeleteScalars bounds the values one deleteScalars removes.
const maxDeleteScalars = 1000

// mathField reports whether math may change a field: a stored Int or
// Float (not a list, not hidden, not @unique: math never makes two
// records collide) of a type the schema declares.
func mathField(t *schema.Type, f *schema.Field) bool {
	return !t.Builtin && !f.List && !f.Hidden && !f.Unique && (f.Type == "Int" || f.Type == "Float")
}

// buildMathInputs creates MathInputInt, MathInputFloat, <T>Maths per type
// with a field math may change, and CoreMathInputUnion; false when no
// type has one (then there is no math field).
func (b *builder) buildMathInputs() bool {
	for _, scalar := range []string{"Int", "Float"} {
		fields := graphql.InputObjectConfigFieldMap{
			"core": &graphql.InputObjectFieldConfig{Type: graphql.NewNonNull(b.inputs["CoreInput"]), Description: "The record: core.id names it."},
		}
		for _, op := range mathOperands {
			fields[op] = &graphql.InputObjectFieldConfig{Type: b.scalars[scalar]}
		}
		b.inputs["MathInput"+scalar] = graphql.NewInputObject(graphql.InputObjectConfig{
			Name:        "MathInput" + scalar,
			Description: "Operations on one " + scalar + " field of an existing record, applied atomically in the order div, times, minus, plus.",
			Fields:      fields,
		})
	}
	union := graphql.InputObjectConfigFieldMap{}
	for _, t := range b.m.Types {
		fields := graphql.InputObjectConfigFieldMap{}
		for _, f := range t.Fields {
			if mathField(t, f) {
				fields[f.Name] = &graphql.InputObjectFieldConfig{Type: b.inputs["MathInput"+f.Type]}
			}
		}
		if len(fields) == 0 {
			continue
		}
		b.inputs[t.Name+"Maths"] = graphql.NewInputObject(graphql.InputObjectConfig{
			Name:        t.Name + "Maths",
			Description: "The numeric fields of " + t.Name + " math may change.",
			Fields:      fields,
		})
		union[t.Name] = &graphql.InputObjectFieldConfig{
			Type: graphql.NewList(graphql.NewNonNull(b.inputs[t.Name+"Maths"])),
		}
	}
	if len(union) == 0 {
		return false
	}
	b.inputs["CoreMathInputUnion"] = graphql.NewInputObject(graphql.InputObjectConfig{
		Name:        "CoreMathInputUnion",
		Description: "Math on numeric fields of existing records, by type.",
		Fields:      union,
	})
	return true
}

// mathRoots returns the math and deleteScalars mutations.
func (b *builder) mathRoots(typeArg *graphql.ArgumentConfig) graphql.Fields {
	fields := graphql.Fields{
		"deleteScalars": &graphql.Field{
			Type:        graphql.NewNonNull(graphql.Int),
			Description: "Remove the given values from a list field of scalars on the records a filter selects that the caller may change; the number of records changed.",
			Args: graphql.FieldConfigArgument{
				"type":   typeArg,
				"field":  &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.String), Description: "A list field of scalars or enum values."},
				"values": &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(b.scalars["Any"]))), Description: "The values to remove (every occurrence)."},
				"arcql":  &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.String), Description: "The filter selecting the records; `*` selects all."},
			},
			Resolve: resolveDeleteScalars,
		},
	}
	if b.buildMathInputs() {
		fields["math"] = &graphql.Field{
			Type:        graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(b.core))),
			Description: "Apply div, times, minus and plus (in that order) to numeric fields of existing records, atomically; one metadata entry per entry of values.",
			Args: graphql.FieldConfigArgument{
				"values": &graphql.ArgumentConfig{Type: graphql.NewNonNull(b.inputs["CoreMathInputUnion"])},
			},
			Resolve: resolveMath,
		}
	}
	return fields
}

// number reads a JSON number of a request.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// arith reads one field's operations: whole operands for an Int field.
func arith(f *schema.Field, in map[string]any, path string) (store.Arith, error) {
	a := store.Arith{Whole: f.Type == "Int", Min: math.MinInt32, Max: math.MaxInt32}
	given := false
	for _, op := range mathOperands {
		v, ok := in[op]
		if !ok || v == nil {
			continue
		}
		n, isNum := number(v)
		if !isNum || math.IsNaN(n) || math.IsInf(n, 0) {
			return a, errcode.New(errcode.BadRequest, "%s.%s: %s is not a number", path, op, describe(v))
		}
		if op == "div" && n == 0 {
			return a, errcode.New(errcode.BadRequest, "%s.div: division by zero", path)
		}
		given = true
		if a.Whole {
			if n != math.Trunc(n) || math.Abs(n) > math.MaxInt32 {
				return a, errcode.New(errcode.BadRequest, "%s.%s: %v is not an Int (a whole number of 32 bits), as %s is", path, op, v, f.Name)
			}
			i := int64(n)
			*map[string]**int64{"div": &a.IDiv, "times": &a.ITimes, "minus": &a.IMinus, "plus": &a.IPlus}[op] = &i
			continue
		}
		*map[string]**float64{"div": &a.Div, "times": &a.Times, "minus": &a.Minus, "plus": &a.Plus}[op] = &n
	}
	if !given {
		return a, errcode.New(errcode.BadRequest, "%s: no operation (div, times, minus or plus)", path)
	}
	return a, nil
}

// resolveMath answers math: every entry's operations go as one write
// (atomic on bolt; on MongoDB each record's change is, and the checks
// run before any applies), each computed from the stored value by the
// store (store.OpMath), under the caller's upsert rights.
func resolveMath(p graphql.ResolveParams) (any, error) {
	c := callFrom(p.Context)
	if err := requireData(c); err != nil {
		return nil, err
	}
	values, _ := rawArg(p, "values").(map[string]any)
	var ops []store.Op
	type target struct{ typ, id string }
	var entries []target
	err := eachEntry(c.schema.model, values, func(t *schema.Type, path string, e any) error {
		more, id, err := mathEntry(c, t, path, e)
		ops = append(ops, more...)
		entries = append(entries, target{t.Name, id})
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(ops) > maxMathValues {
		return nil, errcode.New(errcode.BadRequest, "math: at most %d fields per call, got %d", maxMathValues, len(ops))
	}
	if len(ops) == 0 {
		return []any{}, nil
	}
	if err := checkMathRights(p, c, ops); err != nil {
		return nil, err
	}
	if _, err := c.write(p.Context, ops); err != nil {
		return nil, storeError(err)
	}
	out := make([]any, 0, len(entries))
	for _, e := range entries {
		r, err := c.Store.Get(p.Context, c.Instance.ID, e.typ, e.id)
		if err != nil {
			return nil, notFound(err, e.typ, e.id)
		}
		out = append(out, &meta{rec: r, hideCreated: true})
	}
	return out, nil
}

// mathEntry reads one entry of math's values ({field: {core: {id}, div,
// times, minus, plus}, …}) into its store operations, fields in name
// order, and the id of its first.
func mathEntry(c *call, t *schema.Type, path string, e any) ([]store.Op, string, error) {
	obj, ok := e.(map[string]any)
	if !ok || len(obj) == 0 {
		return nil, "", errcode.New(errcode.BadRequest, "%s: expected an object of %s's numeric fields", path, t.Name)
	}
	var ops []store.Op
	entryID := ""
	for _, fname := range slices.Sorted(maps.Keys(obj)) {
		fpath := path + "." + fname
		f, ok := t.Field(fname)
		if !ok || !mathField(t, f) {
			return nil, "", errcode.New(errcode.BadRequest, "%s: %s.%s is not a numeric field math may change (a stored Int or Float, not a list nor @unique)", fpath, t.Name, fname)
		}
		in, ok := obj[fname].(map[string]any)
		if !ok {
			return nil, "", errcode.New(errcode.BadRequest, "%s: expected {core: {id}, div, times, minus, plus}", fpath)
		}
		core, _ := in["core"].(map[string]any)
		id, _ := core["id"].(string)
		if id == "" {
			return nil, "", errcode.New(errcode.BadRequest, "%s.core.id: required: math changes existing records", fpath)
		}
		a, err := arith(f, in, fpath)
		if err != nil {
			return nil, "", err
		}
		ops = append(ops, store.Op{Kind: store.OpMath, Type: t.Name, ID: id, Now: c.now, Math: map[string]store.Arith{fname: a}})
		if entryID == "" {
			entryID = id
		}
	}
	return ops, entryID, nil
}

// checkMathRights refuses math on a record that does not exist (or the
// caller cannot read: the same answer), that the caller may not change,
// or whose field the caller's upsert grants do not cover.
func checkMathRights(p graphql.ResolveParams, c *call, ops []store.Op) error {
	for _, op := range ops {
		r, err := c.Store.Get(p.Context, c.Instance.ID, op.Type, op.ID)
		if err != nil || r.Trashed != nil || !visible(p.Context, c, r) {
			return notFound(err, op.Type, op.ID)
		}
		if !may(p.Context, c, r, "upsert") {
			return errcode.New(errcode.Forbidden, "%s %s belongs to another account", op.Type, op.ID)
		}
		for name := range op.Math {
			if !fieldWritable(p, c, r, name) {
				return errcode.New(errcode.Forbidden, "%s %s: your grant does not cover the field %s", op.Type, op.ID, name)
			}
		}
	}
	return nil
}

// fieldWritable reports whether the caller's upsert rights on r cover a
// field: its own records wholly, a grantee's only the fields its grants
// list (when they list any).
func fieldWritable(p graphql.ResolveParams, c *call, r *store.Record, field string) bool {
	if owned(c, r) {
		return true
	}
	s, err := c.rights(p.Context, r.Type, "upsert")
	if err != nil {
		return false
	}
	only, limited := s.Fields(r)
	if !limited {
		return true
	}
	_, ok := only[field]
	return ok
}

// resolveDeleteScalars answers deleteScalars: every occurrence of the
// values leaves the list field of the records the filter selects that
// the caller may change (its upsert rights, the field covered); the
// answer is how many records changed (a record holding none of the
// values is not counted).
func resolveDeleteScalars(p graphql.ResolveParams) (any, error) {
	c := callFrom(p.Context)
	if err := requireData(c); err != nil {
		return nil, err
	}
	typ, _ := p.Args["type"].(string)
	field, _ := p.Args["field"].(string)
	text, _ := p.Args["arcql"].(string)
	if err := recordTypeArg(c, "deleteScalars", typ); err != nil {
		return nil, err
	}
	t, _ := c.schema.model.Type(typ)
	f, ok := t.Field(field)
	if !ok {
		return nil, errcode.New(errcode.BadRequest, "deleteScalars: %s has no field %s", typ, field)
	}
	if t.Builtin {
		return nil, errcode.New(errcode.BadRequest, "deleteScalars: %s is a built-in type; change its records with upsert", typ)
	}
	if !f.List || f.Hidden || (f.Kind != schema.KindScalar && f.Kind != schema.KindEnum) {
		return nil, errcode.New(errcode.BadRequest, "deleteScalars: %s.%s is not a list of scalars or enum values", typ, field)
	}
	raw, _ := rawArg(p, "values").([]any)
	if len(raw) > maxDeleteScalars {
		return nil, errcode.New(errcode.BadRequest, "deleteScalars: at most %d values, got %d", maxDeleteScalars, len(raw))
	}
	u := newUpserter(c, p)
	vals := make([]any, 0, len(raw))
	for i, v := range raw {
		if v == nil {
			return nil, errcode.New(errcode.BadRequest, "deleteScalars: values[%d]: null is not a value of %s.%s", i, typ, field)
		}
		val, err := u.one(t, f, v, fmt.Sprintf("values[%d]", i))
		if err != nil {
			return nil, err
		}
		vals = append(vals, val)
	}
	recs, err := selectAll(p.Context, c, typ, text, "upsert", false)
	if err != nil || len(vals) == 0 {
		return 0, err
	}
	var ops []store.Op
	for _, r := range recs {
		if !fieldWritable(p, c, r, field) {
			continue
		}
		op := store.Op{Kind: store.OpRemoveValues, Type: typ, ID: r.ID, Field: field, Values: vals, Now: c.now}
		if set, err := op.Edit(r.Fields); err != nil || len(set) == 0 {
			continue // holds none of the values (or no list)
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return 0, nil
	}
	if _, err := c.write(p.Context, ops); err != nil {
		return nil, storeError(err)
	}
	return len(ops), nil
}
