package gql

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/gqlerrors"
	"github.com/graphql-go/graphql/language/ast"
)

// Values for the compiled executor: variables coerced and arguments built
// by graphql-go's rules (values.go of graphql-go v0.8.1, which exports none
// of them), so that resolvers see the same Args and VariableValues under
// both executors. The differential tests hold the two to the same answers.

// coerceVariables returns a request's variables coerced to their declared
// types, or the error graphql-go answers for the first that does not fit.
func coerceVariables(vars []*varPlan, inputs map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(vars))
	for _, v := range vars {
		val, err := coerceVariable(v, inputs[v.name])
		if err != nil {
			return out, err
		}
		out[v.name] = val
	}
	return out, nil
}

// coerceVariable is graphql-go's getVariableValue.
func coerceVariable(v *varPlan, input any) (any, error) {
	if v.typ == nil {
		return "", gqlerrors.NewError(fmt.Sprintf(`Variable "$%v" expected value of type `+
			`"%v" which cannot be used as an input type.`, v.name, v.typeText), []ast.Node{v.def}, "", nil, []int{}, nil)
	}
	if _, ok := input.(string); ok && isStringType(v.typ) {
		return input, nil // what String's ParseValue returns, without fmt or boxing again
	}
	valid, messages := validInput(input, v.typ)
	if valid {
		if nullish(input) && v.def.DefaultValue != nil {
			return valueFromAST(v.def.DefaultValue, v.typ, nil), nil
		}
		return coerceInput(v.typ, input), nil
	}
	if nullish(input) {
		return "", gqlerrors.NewError(fmt.Sprintf(`Variable "$%v" of required type `+
			`"%v" was not provided.`, v.name, v.typeText), []ast.Node{v.def}, "", nil, []int{}, nil)
	}
	text, _ := json.Marshal(input)
	msg := ""
	if len(messages) > 0 {
		msg = "\n" + strings.Join(messages, "\n")
	}
	return "", gqlerrors.NewError(fmt.Sprintf(`Variable "$%v" got invalid value `+
		`%v.%v`, v.name, string(text), msg), []ast.Node{v.def}, "", nil, []int{}, nil)
}

// isStringType reports whether t is String or ID, optionally non-null:
// their ParseValue returns a string input unchanged.
func isStringType(t graphql.Input) bool {
	if nn, ok := t.(*graphql.NonNull); ok {
		t, _ = nn.OfType.(graphql.Input)
	}
	return t == graphql.String || t == graphql.ID
}

// parseScalar is t.ParseValue(value), but a string for String or ID and
// a float64 for Float are returned as they are, the interface itself:
// their ParseValue returns the same value in a new one (after formatting
// it with fmt for a string), an allocation per field of every input
// object.
func parseScalar(t *graphql.Scalar, value any) any {
	switch value.(type) {
	case string:
		if isStringType(t) {
			return value
		}
	case float64:
		if t == graphql.Float {
			return value
		}
	}
	return t.ParseValue(value)
}

// validInput is graphql-go's isValidInputValue: whether a variable's value
// fits its type, and why not.
func validInput(value any, t graphql.Input) (bool, []string) {
	if nullish(value) {
		if nn, ok := t.(*graphql.NonNull); ok {
			if nn.OfType.Name() != "" {
				return false, []string{fmt.Sprintf(`Expected "%v!", found null.`, nn.OfType.Name())}
			}
			return false, []string{"Expected non-null value, found null."}
		}
		return true, nil
	}
	switch t := t.(type) {
	case *graphql.NonNull:
		inner, _ := t.OfType.(graphql.Input)
		return validInput(value, inner)
	case *graphql.List:
		inner, _ := t.OfType.(graphql.Input)
		rv := reflect.ValueOf(value)
		if rv.Kind() == reflect.Ptr {
			rv = rv.Elem()
		}
		if rv.Kind() == reflect.Slice {
			var all []string
			for i := 0; i < rv.Len(); i++ {
				_, messages := validInput(rv.Index(i).Interface(), inner)
				for idx, m := range messages {
					all = append(all, fmt.Sprintf(`In element #%v: %v`, idx+1, m))
				}
			}
			return len(all) == 0, all
		}
		return validInput(value, inner)
	case *graphql.InputObject:
		obj, ok := value.(map[string]any)
		if !ok {
			return false, []string{fmt.Sprintf(`Expected "%v", found not an object.`, t.Name())}
		}
		fields := t.Fields()
		if inputFits(obj, fields) {
			return true, nil
		}
		// Something does not fit: the messages, in graphql-go's order.
		names := make([]string, 0, len(fields))
		for name := range fields {
			names = append(names, name)
		}
		sort.Strings(names)
		given := make([]string, 0, len(obj))
		for name := range obj {
			given = append(given, name)
		}
		sort.Strings(given)
		all := []string{}
		for _, name := range given {
			if _, ok := fields[name]; !ok {
				all = append(all, fmt.Sprintf(`In field "%v": Unknown field.`, name))
			}
		}
		for _, name := range names {
			_, messages := validInput(obj[name], fields[name].Type)
			for _, m := range messages {
				all = append(all, fmt.Sprintf(`In field "%v": %v`, name, m))
			}
		}
		return len(all) == 0, all
	case *graphql.Scalar:
		if nullish(parseScalar(t, value)) {
			return false, []string{fmt.Sprintf(`Expected type "%v", found "%v".`, t.Name(), value)}
		}
	case *graphql.Enum:
		if nullish(t.ParseValue(value)) {
			return false, []string{fmt.Sprintf(`Expected type "%v", found "%v".`, t.Name(), value)}
		}
	}
	return true, nil
}

// inputFits reports whether an input object's value is valid, without
// the sorted field lists and messages validInput words when it is not:
// most variables fit, and a create's input object is checked on every
// request.
func inputFits(obj map[string]any, fields graphql.InputObjectFieldMap) bool {
	for name := range obj {
		if _, ok := fields[name]; !ok {
			return false
		}
	}
	for name, f := range fields {
		if ok, _ := validInput(obj[name], f.Type); !ok {
			return false
		}
	}
	return true
}

// coerceInput is graphql-go's coerceValue: a valid variable value in the
// shape resolvers receive.
func coerceInput(t graphql.Input, value any) any {
	if nullish(value) {
		return nil
	}
	switch t := t.(type) {
	case *graphql.NonNull:
		inner, _ := t.OfType.(graphql.Input)
		return coerceInput(inner, value)
	case *graphql.List:
		inner, _ := t.OfType.(graphql.Input)
		values := []any{}
		rv := reflect.ValueOf(value)
		if rv.Kind() == reflect.Slice {
			for i := 0; i < rv.Len(); i++ {
				values = append(values, coerceInput(inner, rv.Index(i).Interface()))
			}
			return values
		}
		return append(values, coerceInput(inner, value))
	case *graphql.InputObject:
		obj := map[string]any{}
		in, _ := value.(map[string]any)
		for name, f := range t.Fields() {
			v := coerceInput(f.Type, in[name])
			if nullish(v) {
				v = f.DefaultValue
			}
			if !nullish(v) {
				obj[name] = v
			}
		}
		return obj
	case *graphql.Scalar:
		if parsed := parseScalar(t, value); !nullish(parsed) {
			return parsed
		}
	case *graphql.Enum:
		if parsed := t.ParseValue(value); !nullish(parsed) {
			return parsed
		}
	}
	return nil
}

// argumentValues is graphql-go's getArgumentValues: the arguments of a
// field or directive from its nodes, variables filled in, defaults applied,
// nulls left out.
func argumentValues(defs []*graphql.Argument, nodes []*ast.Argument, vars map[string]any) map[string]any {
	out := make(map[string]any, len(defs))
	for _, d := range defs {
		var value ast.Value
		for _, n := range nodes {
			if n != nil && n.Name != nil && n.Name.Value == d.PrivateName {
				value = n.Value // the last of a name wins, as in graphql-go's map
			}
		}
		v := valueFromAST(value, d.Type, vars)
		if nullish(v) {
			v = d.DefaultValue
		}
		if !nullish(v) {
			out[d.PrivateName] = v
		}
	}
	return out
}

// valueFromAST is graphql-go's valueFromAST: a document value of a type,
// variables read from vars (already coerced).
func valueFromAST(v ast.Value, t graphql.Input, vars map[string]any) any {
	if v == nil {
		return nil
	}
	if variable, ok := v.(*ast.Variable); ok {
		if variable.Name == nil || vars == nil {
			return nil
		}
		return vars[variable.Name.Value]
	}
	switch t := t.(type) {
	case *graphql.NonNull:
		inner, _ := t.OfType.(graphql.Input)
		return valueFromAST(v, inner, vars)
	case *graphql.List:
		inner, _ := t.OfType.(graphql.Input)
		values := []any{}
		if list, ok := v.(*ast.ListValue); ok {
			for _, item := range list.Values {
				values = append(values, valueFromAST(item, inner, vars))
			}
			return values
		}
		return append(values, valueFromAST(v, inner, vars))
	case *graphql.InputObject:
		ov, ok := v.(*ast.ObjectValue)
		if !ok {
			return nil
		}
		given := map[string]*ast.ObjectField{}
		for _, f := range ov.Fields {
			if f == nil || f.Name == nil {
				continue
			}
			given[f.Name.Value] = f
		}
		obj := map[string]any{}
		for name, field := range t.Fields() {
			var value any
			if f, ok := given[name]; ok {
				value = valueFromAST(f.Value, field.Type, vars)
			} else {
				value = field.DefaultValue
			}
			if !nullish(value) {
				obj[name] = value
			}
		}
		return obj
	case *graphql.Scalar:
		return t.ParseLiteral(v)
	case *graphql.Enum:
		return t.ParseLiteral(v)
	}
	return nil
}

// nullish is graphql-go's isNullish: nil, a nil pointer, or NaN.
func nullish(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string, bool, int, int64, []any, map[string]any:
		return false
	case float64:
		return math.IsNaN(x)
	case *meta: // the direct fields' pointers, without reflect
		return x == nil
	case *string:
		return x == nil
	case *time.Time:
		return x == nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Ptr {
		if rv.IsNil() {
			return true
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Float32, reflect.Float64:
		return math.IsNaN(rv.Float())
	}
	return false
}
