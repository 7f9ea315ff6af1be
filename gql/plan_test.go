package gql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/gqlerrors"
	"github.com/graphql-go/graphql/language/ast"
	"github.com/graphql-go/graphql/language/parser"
	"github.com/graphql-go/graphql/language/source"
)

// The compiled executor against graphql.Execute on a schema made to reach
// every branch of completion: scalars of each kind, enums, lists, non-null
// bubbling, interfaces and unions (ResolveType and IsTypeOf), thunks,
// resolver errors and panics, arguments with defaults, input objects and
// lists, variables, fragments and directives, mutation order.

type zooDog struct {
	name    string
	barks   bool
	color   string
	friends []any
}
type zooCat struct{ name string }
type zooPerson struct {
	name string
	pets []any
}

// zooState is the mutable state mutations change; each run gets its own.
type zooState struct {
	mu      sync.Mutex
	counter int
	log     []any
}

type zooKey struct{}

func zooStateOf(ctx context.Context) *zooState { s, _ := ctx.Value(zooKey{}).(*zooState); return s }

func newZooSchema(t testing.TB) *graphql.Schema {
	t.Helper()
	jsonScalar := newJSONScalar("Json", "Any JSON value.")
	color := graphql.NewEnum(graphql.EnumConfig{Name: "Color", Values: graphql.EnumValueConfigMap{
		"RED": {Value: "red"}, "GREEN": {Value: "green"}, "BLUE": {Value: 3},
	}})
	filter := graphql.NewInputObject(graphql.InputObjectConfig{Name: "Filter", Fields: graphql.InputObjectConfigFieldMap{
		"name":   {Type: graphql.String},
		"min":    {Type: graphql.Int, DefaultValue: 1},
		"colors": {Type: graphql.NewList(graphql.NewNonNull(color))},
	}})
	named := graphql.NewInterface(graphql.InterfaceConfig{Name: "Named", Fields: graphql.Fields{
		"name": {Type: graphql.String},
	}})
	var dog, cat, person *graphql.Object
	// animal resolves both abstract types, Named and Pet.
	animal := func(p graphql.ResolveTypeParams) *graphql.Object {
		switch p.Value.(type) {
		case *zooDog:
			return dog
		case *zooCat:
			return cat
		}
		return nil
	}
	named.ResolveType = animal
	leaf := func(typ graphql.Output, v func(src any) (any, error)) *graphql.Field {
		return &graphql.Field{Type: typ, Resolve: func(p graphql.ResolveParams) (any, error) { return v(p.Source) }}
	}
	dog = graphql.NewObject(graphql.ObjectConfig{Name: "Dog", Interfaces: []*graphql.Interface{named},
		IsTypeOf: func(p graphql.IsTypeOfParams) bool { _, ok := p.Value.(*zooDog); return ok },
		Fields: graphql.FieldsThunk(func() graphql.Fields {
			return graphql.Fields{
				"name":    leaf(graphql.String, func(s any) (any, error) { return s.(*zooDog).name, nil }),
				"barks":   leaf(graphql.NewNonNull(graphql.Boolean), func(s any) (any, error) { return s.(*zooDog).barks, nil }),
				"color":   leaf(color, func(s any) (any, error) { return s.(*zooDog).color, nil }),
				"friends": leaf(graphql.NewList(named), func(s any) (any, error) { return s.(*zooDog).friends, nil }),
				"loud":    leaf(graphql.NewNonNull(graphql.String), func(s any) (any, error) { return nil, nil }),
			}
		})})
	cat = graphql.NewObject(graphql.ObjectConfig{Name: "Cat", Interfaces: []*graphql.Interface{named},
		IsTypeOf: func(p graphql.IsTypeOfParams) bool { _, ok := p.Value.(*zooCat); return ok },
		Fields: graphql.Fields{
			"name":  leaf(graphql.String, func(s any) (any, error) { return s.(*zooCat).name, nil }),
			"lives": leaf(graphql.NewNonNull(graphql.Int), func(s any) (any, error) { return 9, nil }),
		}})
	pet := graphql.NewUnion(graphql.UnionConfig{Name: "Pet", Types: []*graphql.Object{dog, cat}, ResolveType: animal})
	person = graphql.NewObject(graphql.ObjectConfig{Name: "Person", Fields: graphql.FieldsThunk(func() graphql.Fields {
		return graphql.Fields{
			"name": leaf(graphql.NewNonNull(graphql.String), func(s any) (any, error) { return s.(*zooPerson).name, nil }),
			"pets": leaf(graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(pet))), func(s any) (any, error) { return s.(*zooPerson).pets, nil }),
			"petsOrNil": leaf(graphql.NewList(pet), func(s any) (any, error) {
				return append(append([]any{}, s.(*zooPerson).pets...), nil), nil
			}),
			"strictPets": leaf(graphql.NewList(graphql.NewNonNull(pet)), func(s any) (any, error) {
				return append(append([]any{}, s.(*zooPerson).pets...), nil), nil
			}),
			"best":     leaf(named, func(s any) (any, error) { return s.(*zooPerson).pets[0], nil }),
			"nick":     leaf(graphql.String, func(any) (any, error) { return nil, nil }),
			"fail":     leaf(graphql.String, func(any) (any, error) { return nil, errors.New("fail on purpose") }),
			"failNN":   leaf(graphql.NewNonNull(graphql.String), func(any) (any, error) { return nil, errors.New("failNN on purpose") }),
			"panics":   leaf(graphql.String, func(any) (any, error) { panic("a resolver panicked") }),
			"panicErr": leaf(graphql.String, func(any) (any, error) { panic(errors.New("an error panicked")) }),
			"thunk":    leaf(graphql.String, func(any) (any, error) { return func() (any, error) { return "from a thunk", nil }, nil }),
			"thunkErr": leaf(graphql.String, func(any) (any, error) {
				return func() (any, error) { return nil, errors.New("thunk failed") }, nil
			}),
			"badFunc":  leaf(graphql.String, func(any) (any, error) { return func() string { return "x" }, nil }),
			"ints":     leaf(graphql.NewList(graphql.Int), func(any) (any, error) { return []int{1, 2, 3}, nil }),
			"intsNN":   leaf(graphql.NewList(graphql.NewNonNull(graphql.Int)), func(any) (any, error) { return []any{1, nil, 3}, nil }),
			"arr":      leaf(graphql.NewList(graphql.Float), func(any) (any, error) { return &[2]float64{0.5, 1e21}, nil }),
			"notList":  leaf(graphql.NewList(graphql.Int), func(any) (any, error) { return 7, nil }),
			"json":     leaf(jsonScalar, func(any) (any, error) { return map[string]any{"b": []any{1.5, "<&>", nil}, "a": true}, nil }),
			"nan":      leaf(graphql.Float, func(any) (any, error) { return math.NaN(), nil }),
			"big":      leaf(graphql.Int, func(any) (any, error) { return int64(1) << 40, nil }),
			"str":      leaf(graphql.String, func(any) (any, error) { return 42.5, nil }),
			"float32":  leaf(graphql.Float, func(any) (any, error) { return float32(0.1), nil }),
			"tiny":     leaf(graphql.Float, func(any) (any, error) { return 1e-7, nil }),
			"enumBad":  leaf(color, func(any) (any, error) { return "purple", nil }),
			"enumInt":  leaf(color, func(any) (any, error) { return 3, nil }),
			"ptrNil":   leaf(graphql.String, func(any) (any, error) { return (*string)(nil), nil }),
			"ptr":      leaf(graphql.String, func(any) (any, error) { s := "pointed"; return &s, nil }),
			"id":       leaf(graphql.ID, func(any) (any, error) { return 12, nil }),
			"unknown":  leaf(named, func(any) (any, error) { return "not a pet", nil }),
			"text":     leaf(graphql.String, func(any) (any, error) { return "tab\t quote\" \\ <b> & \u2028 \x01 bad:\xff é", nil }),
			"ownerOf":  leaf(graphql.NewNonNull(person), func(any) (any, error) { return &zooPerson{name: "nested", pets: []any{&zooCat{"c"}}}, nil }),
			"absentNN": leaf(graphql.NewNonNull(person), func(any) (any, error) { return nil, nil }),
		}
	})})
	anyType := graphql.NewUnion(graphql.UnionConfig{Name: "Any", Types: []*graphql.Object{dog, cat}}) // IsTypeOf decides
	echo := &graphql.Field{Type: jsonScalar,
		Args: graphql.FieldConfigArgument{
			"s": {Type: graphql.String}, "i": {Type: graphql.Int, DefaultValue: 5}, "f": {Type: graphql.Float},
			"b": {Type: graphql.Boolean}, "l": {Type: graphql.NewList(graphql.Int)}, "o": {Type: filter},
			"e": {Type: color}, "ol": {Type: graphql.NewList(filter)}, "id": {Type: graphql.ID},
		},
		Resolve: func(p graphql.ResolveParams) (any, error) {
			return map[string]any{"args": p.Args, "vars": p.Info.VariableValues}, nil
		}}
	lilly := &zooDog{name: "Lilly", barks: true, color: "red"}
	rex := &zooDog{name: "Rex", color: "green", friends: []any{lilly, &zooCat{"Tom"}, nil}}
	ada := &zooPerson{name: "Ada", pets: []any{rex, &zooCat{"Tom"}, lilly}}
	query := graphql.NewObject(graphql.ObjectConfig{Name: "Query", Fields: graphql.Fields{
		"person": {Type: person, Args: graphql.FieldConfigArgument{"id": {Type: graphql.NewNonNull(graphql.ID)}},
			Resolve: func(p graphql.ResolveParams) (any, error) {
				if p.Args["id"] == "none" {
					return nil, nil
				}
				return ada, nil
			}},
		"people": {Type: graphql.NewList(graphql.NewNonNull(person)), Args: graphql.FieldConfigArgument{"first": {Type: graphql.Int, DefaultValue: 2}},
			Resolve: func(p graphql.ResolveParams) (any, error) {
				out := []any{}
				for i := 0; i < p.Args["first"].(int); i++ {
					out = append(out, &zooPerson{name: fmt.Sprint("P", i), pets: []any{rex}})
				}
				return out, nil
			}},
		"pets":  {Type: graphql.NewList(pet), Resolve: func(graphql.ResolveParams) (any, error) { return []any{rex, &zooCat{"Tom"}}, nil }},
		"any":   {Type: graphql.NewList(anyType), Resolve: func(graphql.ResolveParams) (any, error) { return []any{lilly, &zooCat{"Kit"}, 5}, nil }},
		"echo":  echo,
		"err":   {Type: graphql.String, Resolve: func(graphql.ResolveParams) (any, error) { return nil, errors.New("root failed") }},
		"errNN": {Type: graphql.NewNonNull(graphql.String), Resolve: func(graphql.ResolveParams) (any, error) { return nil, errors.New("root NN failed") }},
		"count": {Type: graphql.Int, Resolve: func(p graphql.ResolveParams) (any, error) { return zooStateOf(p.Context).counter, nil }},
		"plain": {Type: graphql.String}, // no resolver: graphql-go's default resolver
	}})
	mutation := graphql.NewObject(graphql.ObjectConfig{Name: "Mutation", Fields: graphql.Fields{
		"inc": {Type: graphql.NewNonNull(graphql.Int), Args: graphql.FieldConfigArgument{"by": {Type: graphql.NewNonNull(graphql.Int)}},
			Resolve: func(p graphql.ResolveParams) (any, error) {
				st := zooStateOf(p.Context)
				st.mu.Lock()
				defer st.mu.Unlock()
				st.counter += p.Args["by"].(int)
				st.log = append(st.log, fmt.Sprint("inc ", p.Args["by"]))
				return st.counter, nil
			}},
		"failNN": {Type: graphql.NewNonNull(graphql.Int), Resolve: func(p graphql.ResolveParams) (any, error) {
			st := zooStateOf(p.Context)
			st.log = append(st.log, "failNN")
			return nil, errors.New("mutation failed")
		}},
		"log": {Type: graphql.NewList(graphql.String), Resolve: func(p graphql.ResolveParams) (any, error) { return zooStateOf(p.Context).log, nil }},
	}})
	s, err := graphql.NewSchema(graphql.SchemaConfig{Query: query, Mutation: mutation, Types: []graphql.Type{dog, cat}})
	if err != nil {
		t.Fatal(err)
	}
	warm(&s)
	return &s
}

// zooRun is one execution's answer in graphql-go's terms.
type zooRun struct {
	data     any // decoded JSON
	raw      []byte
	errs     []string
	compiled bool
	log      []any
}

// runCompiled runs a document on a plan.
func runCompiled(t *testing.T, s *graphql.Schema, doc *ast.Document, op string, vars map[string]any) zooRun {
	t.Helper()
	st := &zooState{}
	ctx := context.WithValue(context.Background(), zooKey{}, st)
	var c opCache
	p := c.get(s, nil, doc, op)
	if p.fallback != "" {
		return zooRun{}
	}
	cv, err := coerceVariables(p.vars, vars)
	if err != nil {
		return zooRun{data: nil, errs: describeErrors([]gqlerrors.FormattedError{gqlerrors.FormatError(err)}), compiled: true}
	}
	pl := p.planFor(cv)
	if pl == nil {
		return zooRun{}
	}
	buf, errs, _, encodeErr := pl.execute(ctx, cv, nil)
	if encodeErr != nil {
		t.Fatalf("encode: %v", encodeErr)
	}
	var data any
	if err := json.Unmarshal(buf, &data); err != nil {
		t.Fatalf("compiled output is not JSON: %v\n%s", err, buf)
	}
	return zooRun{data: data, raw: buf, errs: describeErrors(errs), compiled: true, log: st.log}
}

// runReference runs a document on graphql.Execute.
func runReference(t *testing.T, s *graphql.Schema, doc *ast.Document, op string, vars map[string]any) zooRun {
	t.Helper()
	st := &zooState{}
	ctx := context.WithValue(context.Background(), zooKey{}, st)
	res := graphql.Execute(graphql.ExecuteParams{Schema: *s, AST: doc, OperationName: op, Args: vars, Context: ctx})
	raw, err := json.Marshal(res.Data)
	if err != nil {
		t.Fatalf("reference output: %v", err)
	}
	var data any
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatal(err)
	}
	return zooRun{data: data, raw: raw, errs: describeErrors(res.Errors), log: st.log}
}

// describeErrors renders errors with everything graphql-go gives them:
// message, locations, path and the chain of original errors' types, sorted
// (graphql.Execute runs a query's fields in map order).
func describeErrors(errs []gqlerrors.FormattedError) []string {
	out := []string{}
	for _, e := range errs {
		chain := ""
		for cause := e.OriginalError(); cause != nil; {
			chain += fmt.Sprintf("%T/", cause)
			switch c := cause.(type) {
			case *gqlerrors.Error:
				cause = c.OriginalError
			case gqlerrors.FormattedError:
				cause = c.OriginalError()
			default:
				cause = nil
			}
		}
		out = append(out, fmt.Sprintf("%s %v %v %s", e.Message, e.Locations, e.Path, chain))
	}
	sort.Strings(out)
	return out
}

func mustParse(t testing.TB, s *graphql.Schema, text string) *ast.Document {
	t.Helper()
	doc, err := parser.Parse(parser.ParseParams{Source: source.NewSource(&source.Source{Body: []byte(text), Name: "GraphQL request"})})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if v := graphql.ValidateDocument(s, doc, graphql.SpecifiedRules); !v.IsValid {
		t.Fatalf("invalid document: %v\n%s", v.Errors, text)
	}
	return doc
}

func TestPlanMatchesReference(t *testing.T) {
	t.Parallel()
	s := newZooSchema(t)
	cases := []struct {
		name, doc, op string
		vars          map[string]any
		// wantOrder is the compiled output's exact bytes, when given.
		wantRaw string
	}{
		{name: "scalars", doc: `{ person(id: 1) { name nick id str big float32 tiny nan ptrNil ptr text json enumBad enumInt plain: name } plain }`},
		{name: "selection order and merging", doc: `{ b: person(id: "x") { name } a: person(id: "x") { nick } b: person(id: "x") { id name } __typename }`,
			wantRaw: `{"b":{"name":"Ada","id":"12"},"a":{"nick":null},"__typename":"Query"}`},
		{name: "lists", doc: `{ person(id: 1) { ints intsNN arr notList } }`},
		{name: "nested non-null bubbles to the nullable parent", doc: `{ person(id: 1) { name failNN } pets { __typename } }`},
		{name: "non-null through non-null list to the field", doc: `{ person(id: 1) { strictPets { ... on Dog { name } } petsOrNil { __typename } } }`},
		{name: "non-null root field nulls the data", doc: `{ err pets { __typename } errNN }`},
		{name: "errors and panics", doc: `{ person(id: 1) { fail panics panicErr badFunc unknown { name } } err }`},
		{name: "thunks", doc: `{ person(id: 1) { thunk thunkErr } }`},
		{name: "null source", doc: `{ person(id: "none") { name } }`},
		{name: "non-null object missing", doc: `{ person(id: 1) { ownerOf { name pets { __typename } } absentNN { name } } }`},
		{name: "interfaces and unions", doc: `{ person(id: 1) { best { name __typename ... on Dog { barks color friends { name ... on Cat { lives } } } }
			pets { __typename ... on Dog { name loud } ... on Cat { name lives } } } }`},
		{name: "union by IsTypeOf", doc: `{ any { __typename ... on Dog { name } ... on Cat { name } } }`},
		{name: "fragments", doc: `query { person(id: 1) { ...P ... on Person { nick } ... { name } } }
			fragment P on Person { name pets { ...Pet } }
			fragment Pet on Pet { __typename ... on Dog { ...Named } }
			fragment Named on Named { name }`},
		{name: "fragment spread twice", doc: `{ person(id: 1) { ...N pets { __typename } ...N } } fragment N on Person { name }`,
			wantRaw: `{"person":{"name":"Ada","pets":[{"__typename":"Dog"},{"__typename":"Cat"},{"__typename":"Dog"}]}}`},
		{name: "literal directives", doc: `{ person(id: 1) { name @skip(if: true) nick @include(if: false) id @include(if: true) @skip(if: false)
			... @skip(if: true) { text } ...F @include(if: false) } } fragment F on Person { big }`},
		{name: "variable directives true", doc: `query($a: Boolean!, $b: Boolean!) { person(id: 1) { name @skip(if: $a) nick @include(if: $b) ...F @include(if: $a) } }
			fragment F on Person { big @skip(if: $b) }`, vars: map[string]any{"a": true, "b": false}},
		{name: "variable directives with a default", doc: `query($a: Boolean!, $b: Boolean = true) { person(id: 1) { name @skip(if: $a) nick @include(if: $b) } }`,
			vars: map[string]any{"a": false}},
		{name: "variable directives missing", doc: `query($a: Boolean!) { person(id: 1) { name @skip(if: $a) } }`},
		{name: "arguments: literals and defaults", doc: `{ echo(s: "x", l: [1, 2], o: {name: "n", colors: [RED, GREEN]}, e: BLUE, ol: [{min: 3}], id: 7, f: 2, b: true) }`},
		{name: "arguments: single item for a list", doc: `{ echo(l: 3, ol: {name: "o"}) }`},
		{name: "arguments: variables", doc: `query($s: String, $i: Int, $l: [Int], $o: Filter, $e: Color, $f: Float = 2.5) { echo(s: $s, i: $i, l: $l, o: $o, e: $e, f: $f) }`,
			vars: map[string]any{"s": "str", "i": 3.0, "l": []any{1.0, 2.0}, "o": map[string]any{"name": "n", "colors": []any{"RED"}}, "e": "GREEN"}},
		{name: "arguments: variable inside a literal", doc: `query($n: String, $c: Color!) { echo(o: {name: $n, colors: [$c, RED]}, l: [1, 2]) }`,
			vars: map[string]any{"n": "inner", "c": "BLUE"}},
		{name: "arguments: missing variables", doc: `query($s: String, $i: Int) { echo(s: $s, i: $i) }`},
		{name: "variables: single value for a list", doc: `query($l: [Int], $o: [Filter]) { echo(l: $l, ol: $o) }`,
			vars: map[string]any{"l": 4.0, "o": map[string]any{"min": 2.0}}},
		{name: "bad variable: missing non-null", doc: `query($c: Color!) { echo(e: $c) }`},
		{name: "bad variable: wrong type", doc: `query($i: Int, $o: Filter) { echo(i: $i, o: $o) }`, vars: map[string]any{"i": "many", "o": map[string]any{"nope": 1.0, "colors": []any{"PINK"}}}},
		{name: "bad variable: list item", doc: `query($l: [Int!]) { echo(l: $l) }`, vars: map[string]any{"l": []any{1.0, nil, "x"}}},
		{name: "operation by name", doc: `query A { err } query B { person(id: 1) { name } }`, op: "B"},
		{name: "list in list of objects", doc: `{ people(first: 3) { name pets { __typename } } }`},
		{name: "mutation", doc: `mutation { a: inc(by: 2) b: inc(by: 3) log }`},
		{name: "mutation order by text position", doc: `fragment F on Mutation { first: inc(by: 1) } mutation { second: inc(by: 10) ...F log }`},
		{name: "mutation failure stops the rest", doc: `mutation { a: inc(by: 2) failNN b: inc(by: 3) }`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := mustParse(t, s, tc.doc)
			got := runCompiled(t, s, doc, tc.op, tc.vars)
			if !got.compiled {
				t.Fatalf("the document was not compiled")
			}
			want := runReference(t, s, doc, tc.op, tc.vars)
			if diff := cmp.Diff(want.data, got.data); diff != "" {
				t.Errorf("data (-reference +compiled):\n%s\ncompiled: %s", diff, got.raw)
			}
			if diff := cmp.Diff(want.errs, got.errs); diff != "" {
				t.Errorf("errors (-reference +compiled):\n%s", diff)
			}
			if diff := cmp.Diff(want.log, got.log); diff != "" {
				t.Errorf("mutation side effects (-reference +compiled):\n%s", diff)
			}
			if tc.wantRaw != "" && string(got.raw) != tc.wantRaw {
				t.Errorf("compiled output\n got %s\nwant %s", got.raw, tc.wantRaw)
			}
			if got.raw == nil {
				return
			}
			if err := checkOrder(s, doc, tc.op, tc.vars, got.raw); err != nil {
				t.Errorf("key order: %v\n%s", err, got.raw)
			}
		})
	}
}

// TestPlanDifferences pins the deliberate differences from graphql.Execute
// (plan.go): a thunk's error on a non-null position nulls the nearest
// nullable ancestor, not the whole data.
func TestPlanDifferences(t *testing.T) {
	t.Parallel()
	s := newZooSchema(t)
	strict := graphql.NewObject(graphql.ObjectConfig{Name: "Strict", Fields: graphql.Fields{
		"v": {Type: graphql.NewNonNull(graphql.String), Resolve: func(graphql.ResolveParams) (any, error) {
			return func() (any, error) { return nil, errors.New("late") }, nil
		}},
	}})
	q := graphql.NewObject(graphql.ObjectConfig{Name: "Query", Fields: graphql.Fields{
		"s":  {Type: strict, Resolve: func(graphql.ResolveParams) (any, error) { return struct{}{}, nil }},
		"ok": {Type: graphql.String, Resolve: func(graphql.ResolveParams) (any, error) { return "fine", nil }},
	}})
	ts, err := graphql.NewSchema(graphql.SchemaConfig{Query: q})
	if err != nil {
		t.Fatal(err)
	}
	_ = s
	doc := mustParse(t, &ts, `{ s { v } ok }`)
	got := runCompiled(t, &ts, doc, "", nil)
	if string(got.raw) != `{"s":null,"ok":"fine"}` || len(got.errs) != 1 || !strings.HasPrefix(got.errs[0], "late [{1 7}] [s v]") {
		t.Errorf("compiled: %s %v", got.raw, got.errs)
	}
}

func TestPlanFallback(t *testing.T) {
	t.Parallel()
	s := newZooSchema(t)
	for _, tc := range []struct{ doc, op, want string }{
		{`{ __schema { queryType { name } } }`, "", "introspection (__schema)"},
		{`{ person(id: 1) { name } __type(name: "Dog") { name } }`, "", "introspection (__type)"},
		{`query A { err } query B { err }`, "", "several operations and no operation name"},
		{`query A { err }`, "C", "no operation to run"},
	} {
		var c opCache
		p := c.get(s, nil, mustParse(t, s, tc.doc), tc.op)
		if p.fallback != tc.want {
			t.Errorf("%s: fallback %q, want %q", tc.doc, p.fallback, tc.want)
		}
	}
	// One plan per combination of @skip/@include variables.
	doc := mustParse(t, s, `query($a: Boolean!, $b: Boolean!) { person(id: 1) { name @skip(if: $a) nick @include(if: $b) } }`)
	var c opCache
	p := c.get(s, nil, doc, "")
	seen := map[*plan]bool{}
	for _, vars := range []map[string]any{{"a": false, "b": false}, {"a": true, "b": false}, {"a": false, "b": true}, {"a": true, "b": true}, {"a": true, "b": false}} {
		seen[p.planFor(vars)] = true
	}
	if len(seen) != 4 {
		t.Errorf("%d plans for 4 combinations", len(seen))
	}
}

// checkOrder verifies that every object of a compiled answer lists its keys
// in the order of the spec's CollectFields, computed here independently of
// the plan: fields in document order, fragments expanded where spread.
func checkOrder(s *graphql.Schema, doc *ast.Document, opName string, vars map[string]any, data []byte) error {
	tree, err := decodeOrdered(data)
	if err != nil {
		return err
	}
	var op *ast.OperationDefinition
	frags := map[string]*ast.FragmentDefinition{}
	for _, d := range doc.Definitions {
		switch d := d.(type) {
		case *ast.OperationDefinition:
			if opName == "" || (d.Name != nil && d.Name.Value == opName) {
				op = d
			}
		case *ast.FragmentDefinition:
			frags[d.Name.Value] = d
		}
	}
	if op == nil {
		return errors.New("no operation")
	}
	root := s.QueryType()
	if op.Operation == ast.OperationTypeMutation {
		root = s.MutationType()
	}
	withDefaults := map[string]any{}
	for _, d := range op.VariableDefinitions {
		if b, ok := d.DefaultValue.(*ast.BooleanValue); ok {
			withDefaults[d.Variable.Name.Value] = b.Value
		}
	}
	for k, v := range vars {
		if v != nil {
			withDefaults[k] = v
		}
	}
	o := orderChecker{s: s, frags: frags, vars: withDefaults}
	return o.walk(root, []*ast.SelectionSet{op.SelectionSet}, tree, "data")
}

type orderChecker struct {
	s     *graphql.Schema
	frags map[string]*ast.FragmentDefinition
	vars  map[string]any
}

// orderedObject is a decoded JSON object that remembers its key order.
type orderedObject struct {
	keys []string
	vals map[string]any
}

func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var value func() (any, error)
	value = func() (any, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch tok {
		case json.Delim('{'):
			o := &orderedObject{vals: map[string]any{}}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := value()
				if err != nil {
					return nil, err
				}
				o.keys = append(o.keys, k.(string))
				o.vals[k.(string)] = v
			}
			_, err := dec.Token()
			return o, err
		case json.Delim('['):
			var l []any
			for dec.More() {
				v, err := value()
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.Token()
			return l, err
		}
		return tok, nil
	}
	return value()
}

func (o orderChecker) include(dirs []*ast.Directive) bool {
	for _, d := range dirs {
		var cond any
		for _, a := range d.Arguments {
			switch v := a.Value.(type) {
			case *ast.BooleanValue:
				cond = v.Value
			case *ast.Variable:
				cond = o.vars[v.Name.Value]
			}
		}
		b, ok := cond.(bool)
		if ok && ((d.Name.Value == "skip" && b) || (d.Name.Value == "include" && !b)) {
			return false
		}
	}
	return true
}

func (o orderChecker) applies(cond *ast.Named, t *graphql.Object) bool {
	if cond == nil || cond.Name.Value == t.Name() {
		return true
	}
	if a, ok := o.s.Type(cond.Name.Value).(graphql.Abstract); ok {
		for _, p := range o.s.PossibleTypes(a) {
			if p.Name() == t.Name() {
				return true
			}
		}
	}
	return false
}

// collect returns the response keys of selection sets for a type, in
// order, with their field nodes.
func (o orderChecker) collect(t *graphql.Object, sets []*ast.SelectionSet) ([]string, map[string][]*ast.Field) {
	var keys []string
	fields := map[string][]*ast.Field{}
	seen := map[string]bool{}
	var walk func(set *ast.SelectionSet)
	walk = func(set *ast.SelectionSet) {
		for _, sel := range set.Selections {
			switch sel := sel.(type) {
			case *ast.Field:
				if !o.include(sel.Directives) {
					continue
				}
				k := responseKey(sel)
				if fields[k] == nil {
					keys = append(keys, k)
				}
				fields[k] = append(fields[k], sel)
			case *ast.InlineFragment:
				if o.include(sel.Directives) && o.applies(sel.TypeCondition, t) {
					walk(sel.SelectionSet)
				}
			case *ast.FragmentSpread:
				f := o.frags[sel.Name.Value]
				if !seen[sel.Name.Value] && o.include(sel.Directives) && o.applies(f.TypeCondition, t) {
					seen[sel.Name.Value] = true
					walk(f.SelectionSet)
				}
			}
		}
	}
	for _, s := range sets {
		walk(s)
	}
	return keys, fields
}

func (o orderChecker) walk(t graphql.Type, sets []*ast.SelectionSet, v any, at string) error {
	switch v := v.(type) {
	case []any:
		for i, e := range v {
			if err := o.walk(t, sets, e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
		return nil
	case *orderedObject:
		var candidates []*graphql.Object
		switch t := graphql.GetNamed(t).(type) {
		case *graphql.Object:
			candidates = []*graphql.Object{t}
		case graphql.Abstract:
			candidates = o.s.PossibleTypes(t)
		}
		var last error
		for _, c := range candidates {
			keys, fields := o.collect(c, sets)
			if !slicesEqual(keys, v.keys) {
				last = fmt.Errorf("%s: keys %v, want %v for %s", at, v.keys, keys, c.Name())
				continue
			}
			last = nil
			for _, k := range keys {
				name := fields[k][0].Name.Value
				def := fieldDef(o.s, c, name)
				var sub []*ast.SelectionSet
				for _, f := range fields[k] {
					if f.SelectionSet != nil {
						sub = append(sub, f.SelectionSet)
					}
				}
				if def == nil || len(sub) == 0 {
					continue
				}
				if err := o.walk(def.Type, sub, v.vals[k], at+"."+k); err != nil {
					last = err
					break
				}
			}
			if last == nil {
				return nil
			}
		}
		return last
	}
	return nil
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
