package rest

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/errcode"
)

// coerce turns the values a query string gives for one parameter into the
// value of a GraphQL variable of type t, shaped as a JSON client would
// send it (numbers as float64): Int, Float and Boolean are parsed, String,
// ID, DateTime and Email are taken as they are, an enum must be one of its
// values, an input object (and Json or a scheme's own scalar) is JSON
// text, and a list takes the parameter repeated. Whatever a value holds,
// it stays a value: nothing of it reaches a document's text. A value that
// does not fit is BAD_REQUEST naming the parameter; an unknown record type
// for a CoreMutationType parameter is UNKNOWN_TYPE.
func coerce(param string, vals []string, t graphql.Input) (any, error) {
	if nn, ok := t.(*graphql.NonNull); ok {
		t = nn.OfType
	}
	if l, ok := t.(*graphql.List); ok {
		out := make([]any, 0, len(vals))
		for _, v := range vals {
			x, err := coerceOne(param, v, l.OfType)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	}
	if len(vals) != 1 {
		return nil, errcode.New(errcode.BadRequest, "parameter %s is given %d times; it takes one value", param, len(vals))
	}
	return coerceOne(param, vals[0], t)
}

// coerceOne coerces one value to a non-list type (a list element may be
// non-null; a list of lists is not part of any schema).
func coerceOne(param, v string, t graphql.Input) (any, error) {
	if nn, ok := t.(*graphql.NonNull); ok {
		t = nn.OfType
	}
	if !utf8.ValidString(v) {
		return nil, errcode.New(errcode.BadRequest, "parameter %s is not valid UTF-8", param)
	}
	bad := func(want string) error {
		return errcode.New(errcode.BadRequest, "parameter %s must be %s", param, want)
	}
	switch t := t.(type) {
	case *graphql.Enum:
		for _, ev := range t.Values() {
			if ev.Name == v {
				return v, nil
			}
		}
		if t.Name() == typeEnum {
			return nil, errcode.New(errcode.UnknownType, "parameter %s: %s is not a record type of this schema", param, quoteShort(v))
		}
		names := make([]string, 0, len(t.Values()))
		for _, ev := range t.Values() {
			names = append(names, ev.Name)
		}
		slices.Sort(names)
		return nil, bad("one of " + strings.Join(names, ", "))
	case *graphql.InputObject:
		x, err := decodeJSON([]byte(v))
		if err != nil {
			return nil, errcode.New(errcode.BadRequest, "parameter %s must be a JSON object (%s): %s", param, t.Name(), err)
		}
		if _, ok := x.(map[string]any); !ok {
			return nil, bad("a JSON object (" + t.Name() + ")")
		}
		return x, nil
	case *graphql.Scalar:
		switch t.Name() {
		case "String", "ID", "DateTime", "Email":
			// DateTime and Email are checked by their scalars.
			return v, nil
		case "Int":
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return nil, bad("an Int (a whole number from -2147483648 to 2147483647)")
			}
			return float64(n), nil
		case "Float":
			// JSON's number grammar: no hex, inf, NaN or underscores.
			f, err := strconv.ParseFloat(v, 64)
			if v == "" || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) || !json.Valid([]byte(v)) || err != nil || math.IsInf(f, 0) {
				return nil, bad("a Float (a finite number such as 5.99 or -1e3)")
			}
			return f, nil
		case "Boolean":
			switch v {
			case "true":
				return true, nil
			case "false":
				return false, nil
			}
			return nil, bad("a Boolean (true or false)")
		default:
			// Json and the schema's own scalars: any JSON value, as text.
			x, err := decodeJSON([]byte(v))
			if err != nil {
				return nil, errcode.New(errcode.BadRequest, "parameter %s must be JSON text (%s): %s", param, t.Name(), err)
			}
			return x, nil
		}
	}
	return nil, bad("a value this interface cannot read from a query string")
}

// quoteShort quotes a client's value for a message, cut at 40 characters.
func quoteShort(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		r := []rune(s)
		s = string(r[:40]) + "…"
	}
	return strconv.Quote(s)
}
