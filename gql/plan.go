package gql

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"
	"github.com/graphql-go/graphql/language/printer"
)

// The compiled executor. graphql.Execute collects every selection set again
// for every object it completes, builds a map per object and an args map
// per field and item, and leaves encoding to a second pass; a 25-record page
// spends most of its time there (LIBRARIES.md). A plan does that work once
// per (schema, document, operation): the selection sets collected per
// runtime type (fragments flattened, @skip/@include decided), the arguments
// prepared, the field definitions and their Resolve functions looked up.
// At run time it calls the same resolvers with the same ResolveParams and
// appends JSON in selection order (plan_exec.go).
//
// What a plan covers, and what runs on graphql.Execute instead, is decided
// per operation when it is first compiled:
//   - queries and mutations are compiled; subscriptions fall back;
//   - __schema and __type (introspection) fall back; __typename is compiled;
//   - @skip/@include with literal arguments are decided at compile time;
//     with variables, each combination of those variables' values gets its
//     own plan (at most maxVariants per operation, then fallback);
//   - a document whose operation cannot be chosen (several operations and
//     no name, an unknown name) falls back, so graphql-go words the error.
//
// Deliberate differences from graphql.Execute, where it is not the engine
// of record's behaviour but an accident of its implementation:
//   - a resolver's thunk (func() (any, error)) is called in place, depth
//     first, instead of after the whole level; a thunk's error on a
//     non-null position nulls the nearest nullable ancestor (the spec)
//     instead of the whole data;
//   - fields run in selection order; graphql.Execute runs a query's fields
//     in map order, so when two fields fail the errors come in a stable
//     order here and in a random one there;
//   - it runs on the calling goroutine. graphql.Execute answers with the
//     context's error as soon as the context ends, leaving its goroutine
//     running; the plan checks the context before and after running and
//     answers the same error.
//
// A schema that carries graphql-go extensions must not be given plans: they
// would not be called.

// maxVariants bounds the plans of one operation, one per combination of the
// values of the variables its @skip/@include read.
const maxVariants = 16

// maxOperations bounds the operation names compiled per document.
const maxOperations = 16

// maxPlanFields bounds the fields of one plan; an abstract type multiplies
// a selection by its possible types, so a document of nested abstract
// fields could otherwise compile into a very large plan.
const maxPlanFields = 20_000

// opCache holds the compiled operations of one cached document. The zero
// value is ready; it is safe for concurrent use and lock-free on hits.
type opCache struct {
	mu  sync.Mutex
	ops atomic.Pointer[map[string]*opPlan] // by operation name as requested
}

// get returns the compiled operation opName of doc, compiling it on first
// use.
func (c *opCache) get(schema *graphql.Schema, direct directFields, doc *ast.Document, opName string) *opPlan {
	if m := c.ops.Load(); m != nil {
		if p, ok := (*m)[opName]; ok {
			return p
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.ops.Load()
	if old != nil {
		if p, ok := (*old)[opName]; ok {
			return p
		}
	}
	p := newOpPlan(schema, direct, doc, opName)
	if old != nil && len(*old) >= maxOperations {
		return p // a client naming ever new operations: not kept
	}
	m := make(map[string]*opPlan, 1)
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[opName] = p
	c.ops.Store(&m)
	return p
}

// opPlan is one operation of a document: its variables and its plans.
type opPlan struct {
	// fallback says why the operation runs on graphql.Execute; "" when it
	// is compiled.
	fallback string

	schema    *graphql.Schema
	direct    directFields
	op        *ast.OperationDefinition
	fragments map[string]*ast.FragmentDefinition
	// defs are the fragments as graphql-go hands them to resolvers
	// (ResolveInfo.Fragments).
	defs map[string]ast.Definition
	vars []*varPlan
	// condVars are the variables @skip/@include read, sorted. Their values
	// pick the plan.
	condVars []string

	plain    *plan // when condVars is empty
	mu       sync.Mutex
	variants atomic.Pointer[map[string]*plan]
}

// plan is an operation compiled for one set of @skip/@include decisions.
type plan struct {
	op       *opPlan
	root     *selPlan
	mutation bool
	// order is the order in which a mutation's root fields run: graphql-go
	// runs them by their position in the text (fragments included), which
	// differs from selection order when a fragment defined before the
	// operation is spread in it. nil when it is selection order.
	order []int
	// slots is the number of fields whose arguments read variables; each
	// request computes those once per field, not once per item.
	slots int
	// fields counts the compiled fields.
	fields int
}

// selPlan is a selection set collected for one runtime object type.
type selPlan struct {
	typ    *graphql.Object
	fields []*fieldPlan
}

// fieldPlan is one response key of a selection: the field it runs, its
// merged field nodes, its arguments and how to complete its value.
type fieldPlan struct {
	key    string
	keyAny any // key boxed once, for ResponsePath
	// prefix is `"key":`, prefixComma `,"key":`.
	prefix, prefixComma []byte
	name                string
	// typename is set for __typename: the runtime type's name, written
	// without calling anything.
	typename string
	def      *graphql.FieldDefinition
	resolve  graphql.FieldResolveFn
	parent   *graphql.Object
	asts     []*ast.Field
	nodes    []ast.Node
	// args are the arguments when they read no variable (shared, read
	// only); otherwise argSlot >= 0 and they are computed per request.
	args    map[string]any
	argSlot int
	typ     *typePlan
	// direct reads the field's value without its resolver (plan_direct.go);
	// nil for most fields.
	direct directFn
	// nonNullMsg and iterMsg are graphql-go's messages for a null on a
	// non-null position and a list value that is not a list.
	nonNullMsg, iterMsg string
}

// Kinds of typePlan.
const (
	kindNonNull = iota
	kindList
	kindScalar
	kindEnum
	kindObject
	kindAbstract
)

// Built-in scalars whose Serialize the executor may skip for the Go types
// it returns unchanged.
const (
	fastNone = iota
	fastString
	fastInt
	fastFloat
	fastBoolean
)

// typePlan is a field's output type, with the sub-selections of its
// object types compiled for the field's nodes.
type typePlan struct {
	kind   int
	of     *typePlan
	out    graphql.Output
	scalar *graphql.Scalar
	fast   int
	enum   *graphql.Enum
	// object: the selection of an object type.
	object *selPlan
	// abstract: a union or interface, the selection per possible type and
	// the possible types in schema order (for IsTypeOf).
	union    *graphql.Union
	iface    *graphql.Interface
	members  map[*graphql.Object]*selPlan
	possible []*graphql.Object
}

func (t *typePlan) abstract() graphql.Abstract {
	if t.union != nil {
		return t.union
	}
	return t.iface
}

// newOpPlan selects and prepares the operation opName of doc.
func newOpPlan(schema *graphql.Schema, direct directFields, doc *ast.Document, opName string) *opPlan {
	p := &opPlan{schema: schema, direct: direct, fragments: map[string]*ast.FragmentDefinition{}, defs: map[string]ast.Definition{}}
	var op *ast.OperationDefinition
	for _, d := range doc.Definitions {
		switch d := d.(type) {
		case *ast.OperationDefinition:
			if opName == "" && op != nil {
				p.fallback = "several operations and no operation name"
				return p
			}
			if opName == "" || (d.Name != nil && d.Name.Value == opName) {
				op = d
			}
		case *ast.FragmentDefinition:
			name := ""
			if d.Name != nil {
				name = d.Name.Value
			}
			p.fragments[name] = d
			p.defs[name] = d
		default:
			p.fallback = "a definition that is not executable"
			return p
		}
	}
	if op == nil {
		p.fallback = "no operation to run"
		return p
	}
	p.op = op
	switch op.Operation {
	case ast.OperationTypeQuery:
	case ast.OperationTypeMutation:
		if t := schema.MutationType(); t == nil || t.PrivateName == "" {
			p.fallback = "no mutation type"
			return p
		}
	default:
		p.fallback = "a " + op.Operation + " operation"
		return p
	}
	for _, d := range op.VariableDefinitions {
		if d == nil || d.Variable == nil || d.Variable.Name == nil {
			continue
		}
		p.vars = append(p.vars, newVarPlan(schema, d))
	}
	p.condVars = conditionVariables(op, p.fragments)
	if len(p.condVars) > maxVariantKey {
		p.fallback = "too many variables in @skip/@include"
		return p
	}
	if len(p.condVars) == 0 {
		pl, reason := compile(p, nil)
		if pl == nil {
			p.fallback = reason
			return p
		}
		p.plain = pl
	}
	return p
}

// planFor returns the plan for a request's coerced variables, compiling it
// on first use; nil when the operation must fall back.
func (p *opPlan) planFor(vars map[string]any) *plan {
	if p.plain != nil {
		return p.plain
	}
	var key [maxVariantKey]byte
	n := 0
	for _, name := range p.condVars {
		switch v := vars[name].(type) {
		case bool:
			if v {
				key[n] = 't'
			} else {
				key[n] = 'f'
			}
		default:
			key[n] = 'n' // absent or null: the directive does not apply
		}
		n++
	}
	if m := p.variants.Load(); m != nil {
		if pl, ok := (*m)[string(key[:n])]; ok {
			return pl
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.variants.Load()
	if old != nil {
		if pl, ok := (*old)[string(key[:n])]; ok {
			return pl
		}
		if len(*old) >= maxVariants {
			return nil
		}
	}
	cond := make(map[string]any, n)
	for i, name := range p.condVars {
		switch key[i] {
		case 't':
			cond[name] = true
		case 'f':
			cond[name] = false
		}
	}
	pl, _ := compile(p, cond) // nil: falls back, and is remembered as such
	m := map[string]*plan{}
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[string(key[:n])] = pl
	p.variants.Store(&m)
	return pl
}

// maxVariantKey bounds the variables that may decide @skip/@include in a
// compiled operation; an operation with more falls back.
const maxVariantKey = 8

// conditionVariables returns the variables that @skip/@include arguments of
// an operation (and the fragments it may spread) read, sorted.
func conditionVariables(op *ast.OperationDefinition, frags map[string]*ast.FragmentDefinition) []string {
	seen := map[string]bool{}
	var names []string
	visit := func(dirs []*ast.Directive) {
		for _, d := range dirs {
			if d == nil || d.Name == nil || (d.Name.Value != "skip" && d.Name.Value != "include") {
				continue
			}
			for _, a := range d.Arguments {
				for _, v := range variablesIn(a.Value) {
					if !seen[v] {
						seen[v] = true
						names = append(names, v)
					}
				}
			}
		}
	}
	var walk func(set *ast.SelectionSet)
	walk = func(set *ast.SelectionSet) {
		if set == nil {
			return
		}
		for _, s := range set.Selections {
			switch s := s.(type) {
			case *ast.Field:
				visit(s.Directives)
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				visit(s.Directives)
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				visit(s.Directives)
			}
		}
	}
	walk(op.SelectionSet)
	for _, f := range frags {
		walk(f.SelectionSet)
	}
	sort.Strings(names)
	return names
}

// variablesIn returns the variables a value reads.
func variablesIn(v ast.Value) []string {
	switch v := v.(type) {
	case *ast.Variable:
		if v.Name != nil {
			return []string{v.Name.Value}
		}
	case *ast.ListValue:
		var out []string
		for _, e := range v.Values {
			out = append(out, variablesIn(e)...)
		}
		return out
	case *ast.ObjectValue:
		var out []string
		for _, f := range v.Fields {
			if f != nil {
				out = append(out, variablesIn(f.Value)...)
			}
		}
		return out
	}
	return nil
}

// varPlan is a variable definition with its type resolved.
type varPlan struct {
	name     string
	def      *ast.VariableDefinition
	typ      graphql.Input // nil when the type is unknown or not an input type
	typeText string
}

func newVarPlan(schema *graphql.Schema, d *ast.VariableDefinition) *varPlan {
	v := &varPlan{name: d.Variable.Name.Value, def: d, typeText: fmt.Sprint(printer.Print(d.Type))}
	if t := typeFromAST(schema, d.Type); t != nil && graphql.IsInputType(t) {
		v.typ, _ = t.(graphql.Input)
	}
	return v
}

// typeFromAST resolves a type reference of the document.
func typeFromAST(schema *graphql.Schema, t ast.Type) graphql.Type {
	switch t := t.(type) {
	case *ast.List:
		inner := typeFromAST(schema, t.Type)
		if inner == nil {
			return nil
		}
		return graphql.NewList(inner)
	case *ast.NonNull:
		inner := typeFromAST(schema, t.Type)
		if inner == nil {
			return nil
		}
		return graphql.NewNonNull(inner)
	case *ast.Named:
		if t.Name == nil {
			return nil
		}
		return schema.Type(t.Name.Value)
	}
	return nil
}
