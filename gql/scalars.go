package gql

import (
	"fmt"
	"math"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"

	"github.com/corehq/core/internal/whole"
	"github.com/corehq/core/schema"
)

// timeLayout is how timestamps are served: ISO-8601 UTC with milliseconds,
// fixed width so that the text sorts chronologically.
const timeLayout = "2006-01-02T15:04:05.000Z"

// formatTime renders t in timeLayout (see appendTime).
func formatTime(t time.Time) string {
	var b [len(timeLayout)]byte
	return string(appendTime(b[:0], t))
}

// appendTime appends t in timeLayout, its digits written directly:
// several timestamps of every record read are written.
func appendTime(buf []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(buf, timeLayout)
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	return append(buf,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+month/10), byte('0'+month%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

// parseTime accepts RFC 3339 timestamps (with any fraction and offset) and
// returns them in UTC.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an ISO-8601 timestamp such as 2026-01-02T15:04:05Z", s)
	}
	return t.UTC(), nil
}

// newJSONScalar returns a scalar of any JSON value, passed through: Json,
// and Any (Hypi's name for it).
func newJSONScalar(name, description string) *graphql.Scalar {
	return graphql.NewScalar(graphql.ScalarConfig{
		Name:         name,
		Description:  description,
		Serialize:    func(v any) any { return v },
		ParseValue:   func(v any) any { return v },
		ParseLiteral: literalValue,
	})
}

// newDateTimeScalar returns the DateTime scalar: an ISO-8601 timestamp.
func newDateTimeScalar() *graphql.Scalar {
	parse := func(v any) any {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		t, err := parseTime(s)
		if err != nil {
			return nil
		}
		return formatTime(t)
	}
	return graphql.NewScalar(graphql.ScalarConfig{
		Name:        "DateTime",
		Description: "An ISO-8601 timestamp in UTC, e.g. 2026-01-02T15:04:05.000Z.",
		Serialize: func(v any) any {
			switch v := v.(type) {
			case time.Time:
				return formatTime(v)
			case *time.Time:
				if v == nil {
					return nil
				}
				return formatTime(*v)
			}
			return v
		},
		ParseValue: parse,
		ParseLiteral: func(v ast.Value) any {
			if s, ok := v.(*ast.StringValue); ok {
				return parse(s.Value)
			}
			return nil
		},
	})
}

// newUUIDScalar returns the UUID scalar: a UUID in its 36-character text
// form, kept in lower case.
func newUUIDScalar() *graphql.Scalar {
	return checkedScalar("UUID", "A UUID such as 123e4567-e89b-12d3-a456-426614174000.", uuidValue, nil)
}

// checkedScalar returns a scalar whose inputs value checks and normalizes
// (a string literal, a variable's value, or, when object is set, an
// object literal it checks) and whose output is the value as kept.
func checkedScalar(name, description string, value func(any) (string, bool), object func(*ast.ObjectValue) any) *graphql.Scalar {
	parse := func(v any) any {
		if s, ok := value(v); ok {
			return s
		}
		return nil
	}
	return graphql.NewScalar(graphql.ScalarConfig{
		Name:        name,
		Description: description,
		Serialize:   func(v any) any { return v },
		ParseValue:  parse,
		ParseLiteral: func(v ast.Value) any {
			switch v := v.(type) {
			case *ast.StringValue:
				return parse(v.Value)
			case *ast.ObjectValue:
				if object != nil {
					return object(v)
				}
			}
			return nil
		},
	})
}

// uuidValue returns a UUID input in lower case: a string of the
// 36-character form (8-4-4-4-12 hexadecimal digits).
func uuidValue(v any) (string, bool) {
	s, ok := v.(string)
	if !ok || !schema.ValidUUID(s) {
		return "", false
	}
	return strings.ToLower(s), true
}

// newEmailInputScalar returns EmailInput, the input of an Email: the
// address as a string, or as Hypi's object {value: "<address>"} (in a
// literal its value may be a variable; the resolvers read arguments as the
// client sent them, rawArg). Email values are kept as the address alone,
// so a type other than null is refused rather than dropped.
func newEmailInputScalar() *graphql.Scalar {
	return checkedScalar("EmailInput", "An e-mail address such as ada@example.com, or {value: \"ada@example.com\"} (without type: it is not kept).",
		emailValue, emailLiteral)
}

// emailLiteral checks an object literal of an EmailInput: value a valid
// address or a variable (its value is checked when the resolver reads it),
// no other member (type is not kept). A variable's value answers as the variable's name,
// which no resolver reads (they read arguments through rawArg).
func emailLiteral(v *ast.ObjectValue) any {
	var out any
	for _, f := range v.Fields {
		switch f.Name.Value {
		case "value":
			switch fv := f.Value.(type) {
			case *ast.StringValue:
				if !validEmail(fv.Value) {
					return nil
				}
				out = fv.Value
			case *ast.Variable:
				out = "$" + fv.Name.Value
			default:
				return nil
			}
		default: // type among them: it is not kept (and this parser has no null literal)
			return nil
		}
	}
	return out
}

// newEmailObject returns Email, the output of an Email value: Hypi's
// object {value type}. The source is the address as stored (or an object
// holding it as value, from a function); type is always null (it is not
// kept).
func newEmailObject() *graphql.Object {
	return graphql.NewObject(graphql.ObjectConfig{
		Name:        "Email",
		Description: "An e-mail address.",
		Fields: graphql.Fields{
			"value": &graphql.Field{Type: graphql.NewNonNull(graphql.String), Description: "The address, such as ada@example.com.",
				Resolve: func(p graphql.ResolveParams) (any, error) {
					if m, ok := p.Source.(map[string]any); ok { // a function's answer in Hypi's shape
						return m["value"], nil
					}
					return p.Source, nil
				}},
			"type": &graphql.Field{Type: graphql.String, Description: "Always null: Core keeps the address alone.",
				Resolve: func(graphql.ResolveParams) (any, error) { return nil, nil }},
		},
	})
}

// emailValue returns the address an Email input holds: a string, or an
// object whose member "value" is the string (and "type", if present, null).
func emailValue(v any) (string, bool) {
	if m, ok := v.(map[string]any); ok {
		if t, has := m["type"]; (has && t != nil) || len(m) > 2 || (len(m) == 2 && !has) {
			return "", false
		}
		v = m["value"]
	}
	s, ok := v.(string)
	return s, ok && validEmail(s)
}

// validEmail reports whether s is a bare address (no display name).
func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && len(s) <= 254
}

// newCustomScalar returns a scalar an application declares: any JSON value,
// passed through like Json.
func newCustomScalar(name string) *graphql.Scalar {
	return graphql.NewScalar(graphql.ScalarConfig{
		Name:         name,
		Serialize:    func(v any) any { return v },
		ParseValue:   func(v any) any { return v },
		ParseLiteral: literalValue,
	})
}

// literalValue turns a document literal into a JSON-shaped Go value.
func literalValue(v ast.Value) any {
	switch v := v.(type) {
	case *ast.StringValue:
		return v.Value
	case *ast.IntValue:
		if n, ok := whole.BeyondFloat(v.Value); ok {
			return n // a Long beyond 2^53 stays exact
		}
		var n float64
		if _, err := fmt.Sscan(v.Value, &n); err != nil {
			return nil
		}
		return n
	case *ast.FloatValue:
		var n float64
		if _, err := fmt.Sscan(v.Value, &n); err != nil {
			return nil
		}
		return n
	case *ast.BooleanValue:
		return v.Value
	case *ast.EnumValue:
		return v.Value
	case *ast.ListValue:
		out := make([]any, 0, len(v.Values))
		for _, e := range v.Values {
			out = append(out, literalValue(e))
		}
		return out
	case *ast.ObjectValue:
		out := make(map[string]any, len(v.Fields))
		for _, f := range v.Fields {
			out[f.Name.Value] = literalValue(f.Value)
		}
		return out
	}
	return nil
}

// newLongScalar returns Long: a 64-bit integer kept exactly. Inputs are a
// whole JSON number (jsonvalue decodes one that float64 cannot hold as
// int64), an Int literal, or a string of decimal digits (for clients whose
// numbers are doubles); outputs are JSON numbers.
func newLongScalar() *graphql.Scalar {
	parse := func(v any) any {
		if n, ok := longValue(v); ok {
			return n
		}
		return nil
	}
	return graphql.NewScalar(graphql.ScalarConfig{
		Name:        "Long",
		Description: "A 64-bit integer: a JSON number or a string of decimal digits on input, a JSON number on output.",
		Serialize: func(v any) any {
			if n, ok := longValue(v); ok {
				return n
			}
			return nil
		},
		ParseValue: parse,
		ParseLiteral: func(v ast.Value) any {
			switch v := v.(type) {
			case *ast.IntValue:
				return parse(v.Value)
			case *ast.StringValue:
				return parse(v.Value)
			}
			return nil
		},
	})
}

// longValue returns a Long input as an int64: an int64 or int, a float64
// holding a whole number within int64's range exactly, or a string of
// decimal digits (an optional minus sign, at most 19 digits) within range.
func longValue(v any) (int64, bool) {
	switch v := v.(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	case float64:
		// -2^63 is exact; 2^63 is out of range.
		if v == math.Trunc(v) && v >= -(1<<63) && v < 1<<63 {
			return int64(v), true
		}
	case string:
		if len(v) == 0 || len(v) > 20 {
			return 0, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil && (v[0] != '+')
	}
	return 0, false
}
