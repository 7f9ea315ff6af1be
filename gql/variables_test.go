package gql

import (
	"testing"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/errcode"
)

// checkInput follows GraphQL's input coercion: an object or a list is
// refused where a scalar that takes neither is expected, at any depth; a
// single value for a list type is a list of one; Json, the schema's own
// scalars and Email's {value} take objects.
func TestCheckInput(t *testing.T) {
	t.Parallel()
	status := graphql.NewEnum(graphql.EnumConfig{Name: "Status", Values: graphql.EnumValueConfigMap{"OPEN": {Value: "OPEN"}}})
	in := graphql.NewInputObject(graphql.InputObjectConfig{Name: "In", Fields: graphql.InputObjectConfigFieldMap{
		"name":   {Type: graphql.String},
		"tags":   {Type: graphql.NewList(graphql.NewNonNull(graphql.String))},
		"meta":   {Type: newJSONScalar("Json", "Any JSON value.")},
		"own":    {Type: newCustomScalar("Money")},
		"email":  {Type: newEmailInputScalar()},
		"when":   {Type: newDateTimeScalar()},
		"status": {Type: status},
		"n":      {Type: graphql.Int},
	}})
	obj := map[string]any{"$ne": nil}
	for _, tc := range []struct {
		name string
		typ  graphql.Input
		v    any
		want string // "" when the value passes
	}{
		{"a string for String", graphql.String, "ada", ""},
		{"a number for String (graphql-go's to coerce)", graphql.String, 5.0, ""},
		{"an object for String", graphql.NewNonNull(graphql.String), obj, "variable $x: expected a String, got an object"},
		{"a list for String", graphql.String, []any{"a"}, "variable $x: expected a String, got a list"},
		{"a Go slice for String", graphql.String, []string{"a"}, "variable $x: expected a String, got a list"},
		{"a Go map for ID", graphql.ID, map[string]string{"$gt": ""}, "variable $x: expected an ID (a string or a whole number), got an object"},
		{"an object for Int", graphql.Int, obj, "variable $x: expected an Int (a whole number), got an object"},
		{"an object for Float", graphql.Float, obj, "variable $x: expected a Float (a number), got an object"},
		{"a list for Boolean", graphql.Boolean, []any{true}, "variable $x: expected a Boolean (true or false), got a list"},
		{"an object for an enum", status, obj, "variable $x: expected one of the enum's values (a string), got an object"},
		{"a list for a list", graphql.NewList(graphql.String), []any{"a", "b"}, ""},
		{"a string for a list: a list of one", graphql.NewList(graphql.String), "a", ""},
		{"an object for a list of String", graphql.NewList(graphql.String), obj, "variable $x: expected a String, got an object"},
		{"a list in a list of String", graphql.NewList(graphql.String), []any{"a", []any{"b"}}, "variable $x[1]: expected a String, got a list"},
		{"null", graphql.NewNonNull(graphql.String), nil, ""},
		{"an object for Json", newJSONScalar("Json", "Any JSON value."), obj, ""},
		{"an object for a schema's scalar", newCustomScalar("Money"), obj, ""},
		{"{value} for Email", newEmailInputScalar(), map[string]any{"value": "ada@example.com"}, ""},
		{"another object for Email", newEmailInputScalar(), obj, `variable $x: expected an EmailInput (an address as a string, or {"value": "<address>"}), got an object`},
		{"{value, type} for Email", newEmailInputScalar(), map[string]any{"value": "ada@example.com", "type": "work"}, `variable $x: expected an EmailInput (an address as a string, or {"value": "<address>"}), got an object`},
		{"$date for DateTime", newDateTimeScalar(), map[string]any{"$date": "2026-01-02T15:04:05Z"}, "variable $x: expected a DateTime (an ISO-8601 timestamp string), got an object"},
		{"an input object that fits", in, map[string]any{"name": "a", "tags": []any{"x"}, "meta": obj, "own": obj, "email": "a@b.example", "status": "OPEN", "n": 1.0}, ""},
		{"an unknown field (graphql-go's to answer)", in, map[string]any{"nope": obj}, ""},
		{"an object in an input object", in, map[string]any{"name": obj}, "variable $x.name: expected a String, got an object"},
		{"in a list of input objects", graphql.NewList(in), []any{map[string]any{"name": "a"}, map[string]any{"tags": []any{obj}}}, "variable $x[1].tags[0]: expected a String, got an object"},
		{"one input object for a list of them", graphql.NewList(in), map[string]any{"when": obj}, "variable $x.when: expected a DateTime (an ISO-8601 timestamp string), got an object"},
		{"the first bad field by name", in, map[string]any{"when": obj, "name": obj, "n": obj}, "variable $x.n: expected an Int (a whole number), got an object"},
		{"not an object for an input object (graphql-go's to answer)", in, "x", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkInput(tc.typ, tc.v, "$x")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("passed, want %q", tc.want)
			case tc.want != "":
				e := errcode.As(err)
				if e.Code != errcode.BadRequest || e.Message != tc.want {
					t.Errorf("%s %q, want BAD_REQUEST %q", e.Code, e.Message, tc.want)
				}
			}
		})
	}
}

// The first bad field of an input object is the same whatever order its
// map is read in.
func TestCheckInputDeterministic(t *testing.T) {
	t.Parallel()
	in := graphql.NewInputObject(graphql.InputObjectConfig{Name: "In", Fields: graphql.InputObjectConfigFieldMap{
		"a": {Type: graphql.String}, "b": {Type: graphql.String}, "c": {Type: graphql.String}, "d": {Type: graphql.String},
	}})
	v := map[string]any{"d": []any{}, "c": []any{}, "b": map[string]any{}, "a": "fine"}
	for range 50 {
		if err := checkInput(in, v, "$v"); err == nil || err.Error() != "variable $v.b: expected a String, got an object" {
			t.Fatalf("got %v", err)
		}
	}
}
