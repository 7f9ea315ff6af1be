package gql

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"

	"github.com/corehq/core/errcode"
)

// GraphQL's input coercion accepts for String, ID, Int, Float and Boolean
// only a value of that scalar, never an object or a list. graphql-go's
// String and ID turn anything into text (an object {"$ne": null} becomes
// "map[$ne:<nil>]"), and its Boolean reads much as true, so a variable
// meant to be a name could carry an operator-shaped object to a resolver
// as a string. checkVariables refuses such values before either executor
// coerces them (the compiled plan's coerceVariables and graphql.Execute
// both follow graphql-go), so every door refuses them alike: /graphql,
// REST's rewritten documents, webhooks' documents and functions'
// core.graphql all run through Schema.Run.
//
// Arguments written in the document need no check here: graphql-go's
// validation (ArgumentsOfCorrectType) already refuses an object literal
// for String. Lists for a list type are fine, and a single value for a
// list type is a list of one, as the specification says. Json, the
// schema's own scalars and the input objects take objects; Email takes
// {value: "<address>"} besides a string.

// checkVariables returns BAD_REQUEST naming the first variable of the
// operation whose value holds an object or a list where a scalar
// (String, ID, Int, Float, Boolean, DateTime, Email) or an enum is
// expected, or an Int that is not a whole 32-bit number, at any depth of
// input objects and lists.
func checkVariables(s *graphql.Schema, doc *ast.Document, opName string, vars map[string]any) error {
	if len(vars) == 0 {
		return nil
	}
	op := operation(doc, opName)
	if op == nil {
		return nil // execution reports the missing operation
	}
	for _, d := range op.VariableDefinitions {
		if d == nil || d.Variable == nil || d.Variable.Name == nil {
			continue
		}
		v, ok := vars[d.Variable.Name.Value]
		if !ok || v == nil {
			continue
		}
		t := variableType(s, d.Type)
		if t == nil {
			continue // validation refused the document already
		}
		if checkValue(t, v, "", false) != nil { // as checkInput, the path written only for an error
			return checkValue(t, v, "$"+d.Variable.Name.Value, true)
		}
	}
	return nil
}

// variableType resolves a variable's declared type for checkInput,
// without building wrappers for the usual T and T!: non-null adds nothing
// to what checkInput looks at.
func variableType(s *graphql.Schema, t ast.Type) graphql.Input {
	if nn, ok := t.(*ast.NonNull); ok {
		t = nn.Type
	}
	if n, ok := t.(*ast.Named); ok {
		if n.Name == nil {
			return nil
		}
		in, _ := s.Type(n.Name.Value).(graphql.Input)
		return in
	}
	in, _ := typeFromAST(s, t).(graphql.Input)
	return in
}

// checkInput checks one value of type t; path names it in the error.
func checkInput(t graphql.Input, v any, path string) error {
	// Almost every value fits: it is checked first without the paths of
	// its parts, which only an error shows, and again with them when it
	// does not fit.
	if checkValue(t, v, "", false) == nil {
		return nil
	}
	return checkValue(t, v, path, true)
}

// errUnfit is checkValue's error when it is not asked for paths.
var errUnfit = errors.New("gql: a variable does not fit its type")

// checkValue is checkInput with path and the paths of v's parts written
// out only if named. An error of an unnamed check (mostly errUnfit) says
// only that v does not fit; it is never shown.
func checkValue(t graphql.Input, v any, path string, named bool) error {
	if v == nil {
		return nil
	}
	switch t := t.(type) {
	case *graphql.NonNull:
		inner, _ := t.OfType.(graphql.Input)
		return checkValue(inner, v, path, named)
	case *graphql.List:
		inner, _ := t.OfType.(graphql.Input)
		if l, ok := v.([]any); ok {
			for i, e := range l {
				if err := checkValue(inner, e, elemPath(path, i, named), named); err != nil {
					return err
				}
			}
			return nil
		}
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
			for i := 0; i < rv.Len(); i++ {
				if err := checkValue(inner, rv.Index(i).Interface(), elemPath(path, i, named), named); err != nil {
					return err
				}
			}
			return nil
		}
		return checkValue(inner, v, path, named) // a list of one
	case *graphql.InputObject:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil // graphql-go answers "found not an object"
		}
		fields := t.Fields()
		for name, fv := range obj {
			if f, ok := fields[name]; ok && checkValue(f.Type, fv, fieldPath(path, name, named), named) != nil {
				if !named {
					return errUnfit
				}
				return firstBadField(obj, fields, path)
			}
		}
		return nil
	case *graphql.Scalar:
		want := scalarWants(t.Name())
		if want == "" {
			return nil // Json and the schema's own scalars take any value
		}
		if t.Name() == "EmailInput" {
			if _, ok := v.(map[string]any); ok {
				if _, ok := emailValue(v); ok {
					return nil
				}
			}
		}
		if got := composite(v); got != "" {
			if !named {
				return errUnfit
			}
			return errcode.New(errcode.BadRequest, "variable %s: expected %s, got %s", path, want, got)
		}
		if t.Name() == "Int" {
			return checkInt(v, path, want)
		}
	case *graphql.Enum:
		if got := composite(v); got != "" {
			if !named {
				return errUnfit
			}
			return errcode.New(errcode.BadRequest, "variable %s: expected one of the enum's values (a string), got %s", path, got)
		}
	}
	return nil
}

// elemPath is the path of element i of the list at path, if named.
func elemPath(path string, i int, named bool) string {
	if !named {
		return ""
	}
	return path + "[" + strconv.Itoa(i) + "]"
}

// fieldPath is the path of field name of the object at path, if named.
func fieldPath(path, name string, named bool) string {
	if !named {
		return ""
	}
	return path + "." + name
}

// checkInt refuses for an Int what GraphQL's input coercion refuses and
// graphql-go would round or parse: a number with a fraction (2.5), one
// outside 32 bits, and text ("5"); a JSON number of a whole value passes.
func checkInt(v any, path, want string) error {
	switch n := v.(type) {
	case float64:
		if n != math.Trunc(n) || n < math.MinInt32 || n > math.MaxInt32 {
			return errcode.New(errcode.BadRequest, "variable %s: expected %s, got %s", path, want, strconv.FormatFloat(n, 'g', -1, 64))
		}
	case int64: // beyond 2^53: never an Int
		return errcode.New(errcode.BadRequest, "variable %s: expected %s, got %d", path, want, n)
	case string:
		return errcode.New(errcode.BadRequest, "variable %s: expected %s, got a string", path, want)
	case bool:
		return errcode.New(errcode.BadRequest, "variable %s: expected %s, got a Boolean", path, want)
	}
	return nil
}

// firstBadField returns the error of an input object's first field (by
// name) that does not fit: the same error whatever order a map is read in.
func firstBadField(obj map[string]any, fields graphql.InputObjectFieldMap, path string) error {
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if f, ok := fields[name]; ok {
			if err := checkValue(f.Type, obj[name], path+"."+name, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// scalarWants describes the values a scalar takes when objects are not
// among them; "" for a scalar that takes any JSON value.
func scalarWants(name string) string {
	switch name {
	case "String":
		return "a String"
	case "ID":
		return "an ID (a string or a whole number)"
	case "Int":
		return "an Int (a whole number)"
	case "Float":
		return "a Float (a number)"
	case "Boolean":
		return "a Boolean (true or false)"
	case "DateTime":
		return "a DateTime (an ISO-8601 timestamp string)"
	case "UUID":
		return "a UUID (a string such as 123e4567-e89b-12d3-a456-426614174000)"
	case "Long":
		return "a Long (a whole number of 64 bits, or a string of its digits)"
	case "EmailInput":
		return `an EmailInput (an address as a string, or {"value": "<address>"})`
	}
	return ""
}

// composite names what v is when it is an object or a list, else "".
func composite(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string, float64, bool:
		return ""
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return ""
}
