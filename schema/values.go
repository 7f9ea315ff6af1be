package schema

import (
	"fmt"
	"math"
	"net/mail"
	"strconv"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
)

// checkLiteral checks a literal (a default value or a directive argument)
// against an input type and describes the first problem, or returns "".
// A single value where a list is expected is accepted as a list of one, as
// GraphQL's input coercion does.
func (b *builder) checkLiteral(v *ast.Value, t *ast.Type) string {
	if v == nil || t == nil {
		return ""
	}
	if v.Kind == ast.Variable {
		return fmt.Sprintf("must be a literal, not the variable $%s", v.Raw)
	}
	if v.Kind == ast.NullValue {
		if t.NonNull {
			return fmt.Sprintf("expected %s, found null", t.String())
		}
		return ""
	}
	if t.Elem != nil {
		if v.Kind != ast.ListValue {
			return b.checkLiteral(v, t.Elem)
		}
		for i, c := range v.Children {
			if problem := b.checkLiteral(c.Value, t.Elem); problem != "" {
				return fmt.Sprintf("item %d: %s", i, problem)
			}
		}
		return ""
	}
	n, ok := b.named[t.NamedType]
	if !ok {
		return "" // unknown types are reported where they are named
	}
	mismatch := fmt.Sprintf("expected %s, found %s", t.String(), describe(v))
	switch n.kind {
	case kindEnum:
		if v.Kind != ast.EnumValue || n.def == nil || !hasEnumValue(n, v.Raw) {
			return mismatch
		}
	case kindInput:
		return b.checkObjectLiteral(v, n)
	case kindScalar:
		if !scalarLiteralOK(n.name, v) {
			return mismatch
		}
	}
	return ""
}

// checkObjectLiteral checks an input object literal against input n.
func (b *builder) checkObjectLiteral(v *ast.Value, n *named) string {
	if v.Kind != ast.ObjectValue {
		return fmt.Sprintf("expected %s, found %s", n.name, describe(v))
	}
	fields := n.fields()
	given := map[string]bool{}
	for _, c := range v.Children {
		fd := fields.ForName(c.Name)
		switch {
		case fd == nil:
			return fmt.Sprintf("%s has no field %s", n.name, c.Name)
		case given[c.Name]:
			return fmt.Sprintf("field %s is given twice", c.Name)
		}
		given[c.Name] = true
		if problem := b.checkLiteral(c.Value, fd.Type); problem != "" {
			return fmt.Sprintf("field %s: %s", c.Name, problem)
		}
	}
	for _, fd := range fields {
		if fd.Type != nil && fd.Type.NonNull && fd.DefaultValue == nil && !given[fd.Name] {
			return fmt.Sprintf("%s needs the field %s", n.name, fd.Name)
		}
	}
	return ""
}

func hasEnumValue(n *named, value string) bool {
	for _, p := range n.parts() {
		if p.EnumValues.ForName(value) != nil {
			return true
		}
	}
	return false
}

// scalarLiteralOK checks a literal of a scalar type. Custom scalars and
// Json accept any literal.
func scalarLiteralOK(scalar string, v *ast.Value) bool {
	str := v.Kind == ast.StringValue || v.Kind == ast.BlockValue
	switch scalar {
	case "String":
		return str
	case "ID":
		return str || v.Kind == ast.IntValue
	case "Int":
		n, err := strconv.ParseInt(v.Raw, 10, 64)
		return v.Kind == ast.IntValue && err == nil && n >= math.MinInt32 && n <= math.MaxInt32
	case "Float":
		return v.Kind == ast.IntValue || v.Kind == ast.FloatValue
	case "Boolean":
		return v.Kind == ast.BooleanValue
	case "DateTime":
		_, err := time.Parse(time.RFC3339Nano, v.Raw)
		return str && err == nil
	case "UUID":
		return str && ValidUUID(v.Raw)
	case "Email":
		a, err := mail.ParseAddress(v.Raw)
		return str && err == nil && a.Address == v.Raw
	}
	return true
}

// describe shortens a literal for a message.
func describe(v *ast.Value) string {
	s := []rune(v.String())
	if len(s) > 40 {
		return string(s[:37]) + "..."
	}
	return string(s)
}
