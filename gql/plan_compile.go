package gql

import (
	"fmt"
	"sort"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"
)

// Compiling an operation into a plan (plan.go): fields collected per
// runtime type as graphql-go's collectFields would collect them at run
// time, field definitions and resolvers looked up, arguments without
// variables built once.

// compiler builds one plan.
type compiler struct {
	op   *opPlan
	pl   *plan
	cond map[string]any // the values @skip/@include read
	// fail says why the operation cannot be compiled.
	fail string
}

// compile builds the plan of an operation for the given @skip/@include
// variable values; nil and the reason when the operation must fall back.
func compile(op *opPlan, cond map[string]any) (*plan, string) {
	c := &compiler{op: op, cond: cond, pl: &plan{op: op}}
	schema := op.schema
	root := schema.QueryType()
	if op.op.Operation == ast.OperationTypeMutation {
		root = schema.MutationType()
		c.pl.mutation = true
	}
	groups := c.collect(root, []*ast.SelectionSet{op.op.SelectionSet})
	c.pl.root = c.selection(root, groups)
	if c.fail != "" {
		return nil, c.fail
	}
	if c.pl.mutation {
		c.pl.order = executionOrder(groups, c.pl.root)
	}
	return c.pl, ""
}

// group is the field nodes of one response key, in collection order.
type group struct {
	key  string
	asts []*ast.Field
}

// collect gathers the fields of selection sets for a runtime type, as
// graphql-go's collectFields does: fields by response key in the order
// first seen, fragments whose type condition matches flattened in place,
// each named fragment once, @skip/@include applied.
func (c *compiler) collect(rt *graphql.Object, sets []*ast.SelectionSet) []*group {
	var groups []*group
	index := map[string]*group{}
	visited := map[string]bool{}
	var walk func(set *ast.SelectionSet)
	walk = func(set *ast.SelectionSet) {
		if set == nil {
			return
		}
		for _, sel := range set.Selections {
			switch sel := sel.(type) {
			case *ast.Field:
				if !c.include(sel.Directives) {
					continue
				}
				key := responseKey(sel)
				g, ok := index[key]
				if !ok {
					g = &group{key: key}
					index[key] = g
					groups = append(groups, g)
				}
				g.asts = append(g.asts, sel)
			case *ast.InlineFragment:
				if !c.include(sel.Directives) || !c.matches(sel.TypeCondition, rt) {
					continue
				}
				walk(sel.SelectionSet)
			case *ast.FragmentSpread:
				name := ""
				if sel.Name != nil {
					name = sel.Name.Value
				}
				if visited[name] || !c.include(sel.Directives) {
					continue
				}
				visited[name] = true
				f, ok := c.op.fragments[name]
				if !ok || !c.matches(f.TypeCondition, rt) {
					continue
				}
				walk(f.SelectionSet)
			}
		}
	}
	for _, s := range sets {
		walk(s)
	}
	return groups
}

// responseKey is a field's alias, or its name.
func responseKey(f *ast.Field) string {
	if f.Alias != nil && f.Alias.Value != "" {
		return f.Alias.Value
	}
	if f.Name != nil {
		return f.Name.Value
	}
	return ""
}

// include decides @skip and @include as graphql-go's shouldIncludeNode:
// the last of each kind counts, skip before include, and an `if` that is
// not a boolean (a null or absent variable) does not apply.
func (c *compiler) include(dirs []*ast.Directive) bool {
	var skip, incl *ast.Directive
	for _, d := range dirs {
		if d == nil || d.Name == nil {
			continue
		}
		switch d.Name.Value {
		case graphql.SkipDirective.Name:
			skip = d
		case graphql.IncludeDirective.Name:
			incl = d
		}
	}
	if skip != nil {
		args := argumentValues(graphql.SkipDirective.Args, skip.Arguments, c.cond)
		if v, ok := args["if"].(bool); ok && v {
			return false
		}
	}
	if incl != nil {
		args := argumentValues(graphql.IncludeDirective.Args, incl.Arguments, c.cond)
		if v, ok := args["if"].(bool); ok && !v {
			return false
		}
	}
	return true
}

// matches reports whether a fragment's type condition applies to a runtime
// type.
func (c *compiler) matches(cond *ast.Named, rt *graphql.Object) bool {
	if cond == nil {
		return true
	}
	name := ""
	if cond.Name != nil {
		name = cond.Name.Value
	}
	t := c.op.schema.Type(name)
	if t == nil {
		return false
	}
	if t == graphql.Type(rt) || t.Name() == rt.Name() {
		return true
	}
	if a, ok := t.(graphql.Abstract); ok {
		return isPossible(c.op.schema, a, rt)
	}
	return false
}

// isPossible reports whether an object type is a possible type of an
// abstract type, by name as graphql-go's IsPossibleType (which caches in
// the schema and so is not called here).
func isPossible(schema *graphql.Schema, a graphql.Abstract, o *graphql.Object) bool {
	for _, t := range schema.PossibleTypes(a) {
		if t.Name() == o.Name() {
			return true
		}
	}
	return false
}

// selection compiles collected fields for a runtime type.
func (c *compiler) selection(rt *graphql.Object, groups []*group) *selPlan {
	sp := &selPlan{typ: rt}
	for _, g := range groups {
		if f := c.field(rt, g); f != nil {
			sp.fields = append(sp.fields, f)
		}
	}
	return sp
}

// fieldDef looks a field up as graphql-go's getFieldDef does.
func fieldDef(schema *graphql.Schema, parent *graphql.Object, name string) *graphql.FieldDefinition {
	switch {
	case name == graphql.SchemaMetaFieldDef.Name && schema.QueryType() == parent:
		return graphql.SchemaMetaFieldDef
	case name == graphql.TypeMetaFieldDef.Name && schema.QueryType() == parent:
		return graphql.TypeMetaFieldDef
	case name == graphql.TypeNameMetaFieldDef.Name:
		return graphql.TypeNameMetaFieldDef
	}
	return parent.Fields()[name]
}

// field compiles one response key; nil when its field does not exist on
// the type (graphql-go leaves such keys out).
func (c *compiler) field(rt *graphql.Object, g *group) *fieldPlan {
	c.pl.fields++
	if c.pl.fields > maxPlanFields {
		c.fail = "the plan would be too large"
		return nil
	}
	first := g.asts[0]
	name := ""
	if first.Name != nil {
		name = first.Name.Value
	}
	def := fieldDef(c.op.schema, rt, name)
	if def == nil {
		return nil
	}
	f := &fieldPlan{
		key:        g.key,
		keyAny:     g.key,
		prefix:     appendString([]byte(nil), g.key),
		name:       name,
		def:        def,
		resolve:    def.Resolve,
		parent:     rt,
		asts:       g.asts,
		nodes:      graphql.FieldASTsToNodeASTs(g.asts),
		argSlot:    -1,
		nonNullMsg: fmt.Sprintf("Cannot return null for non-nullable field %v.%v.", rt, name),
		iterMsg:    fmt.Sprintf("User Error: expected iterable, but did not find one for field %v.%v.", rt.Name(), name),
	}
	f.prefix = append(f.prefix, ':')
	f.prefixComma = append([]byte{','}, f.prefix...)
	switch def {
	case graphql.SchemaMetaFieldDef, graphql.TypeMetaFieldDef:
		c.fail = "introspection (" + name + ")"
		return nil
	case graphql.TypeNameMetaFieldDef:
		f.typename = rt.Name()
		return f
	}
	f.direct = c.op.direct.lookup(rt.Name(), name)
	if f.resolve == nil {
		f.resolve = graphql.DefaultResolveFn
	}
	readsVars := false
	for _, a := range first.Arguments {
		if a != nil && len(variablesIn(a.Value)) > 0 {
			readsVars = true
		}
	}
	if readsVars {
		f.argSlot = c.pl.slots
		c.pl.slots++
	} else {
		f.args = argumentValues(def.Args, first.Arguments, nil)
	}
	f.typ = c.typ(def.Type, g)
	return f
}

// typ compiles an output type for the field nodes of g.
func (c *compiler) typ(t graphql.Output, g *group) *typePlan {
	tp := &typePlan{out: t}
	switch t := t.(type) {
	case *graphql.NonNull:
		tp.kind = kindNonNull
		tp.of = c.typ(t.OfType, g)
	case *graphql.List:
		tp.kind = kindList
		tp.of = c.typ(t.OfType, g)
	case *graphql.Scalar:
		tp.kind = kindScalar
		tp.scalar = t
		switch t {
		case graphql.String, graphql.ID:
			tp.fast = fastString
		case graphql.Int:
			tp.fast = fastInt
		case graphql.Float:
			tp.fast = fastFloat
		case graphql.Boolean:
			tp.fast = fastBoolean
		}
	case *graphql.Enum:
		tp.kind = kindEnum
		tp.enum = t
	case *graphql.Object:
		tp.kind = kindObject
		tp.object = c.selection(t, c.collect(t, subSelections(g)))
	case *graphql.Union:
		tp.kind = kindAbstract
		tp.union = t
		c.members(tp, g)
	case *graphql.Interface:
		tp.kind = kindAbstract
		tp.iface = t
		c.members(tp, g)
	default:
		c.fail = fmt.Sprintf("output type %v", t)
	}
	return tp
}

// members compiles the selection of an abstract type for each of its
// possible types; types that select nothing share one empty selection.
func (c *compiler) members(tp *typePlan, g *group) {
	tp.possible = c.op.schema.PossibleTypes(tp.abstract())
	tp.members = make(map[*graphql.Object]*selPlan, len(tp.possible))
	sets := subSelections(g)
	for _, o := range tp.possible {
		groups := c.collect(o, sets)
		if len(groups) == 0 {
			tp.members[o] = &selPlan{typ: o}
			continue
		}
		tp.members[o] = c.selection(o, groups)
	}
}

// subSelections returns the selection sets of a group's field nodes.
func subSelections(g *group) []*ast.SelectionSet {
	out := make([]*ast.SelectionSet, 0, len(g.asts))
	for _, f := range g.asts {
		if f != nil && f.SelectionSet != nil {
			out = append(out, f.SelectionSet)
		}
	}
	return out
}

// executionOrder returns the order graphql-go runs a mutation's root
// fields in (by the earliest text position of each key's nodes), or nil
// when that is selection order.
func executionOrder(groups []*group, root *selPlan) []int {
	pos := make([]int, len(root.fields))
	byKey := map[string]int{}
	for _, g := range groups {
		lowest := -1
		for _, f := range g.asts {
			if f.Loc != nil && (lowest == -1 || f.Loc.Start < lowest) {
				lowest = f.Loc.Start
			}
		}
		byKey[g.key] = lowest
	}
	order := make([]int, len(root.fields))
	for i, f := range root.fields {
		order[i] = i
		pos[i] = byKey[f.key]
	}
	sort.SliceStable(order, func(a, b int) bool { return pos[order[a]] < pos[order[b]] })
	for i, o := range order {
		if i != o {
			return order
		}
	}
	return nil
}
