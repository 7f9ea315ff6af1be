package gql

import (
	"fmt"
	"sort"
	"strings"

	"github.com/graphql-go/graphql"
)

// PrintSchema renders the executable schema as SDL, types in name order,
// fields in name order, without descriptions: a stable text for golden
// tests and for clients that want the schema as a document.
func PrintSchema(s *graphql.Schema) string {
	var names []string
	for name := range s.TypeMap() {
		if strings.HasPrefix(name, "__") {
			continue
		}
		switch name {
		case "String", "Int", "Float", "Boolean", "ID":
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, name := range names {
		if i > 0 {
			b.WriteString("\n")
		}
		switch t := s.TypeMap()[name].(type) {
		case *graphql.Scalar:
			fmt.Fprintf(&b, "scalar %s\n", name)
		case *graphql.Enum:
			var vals []string
			for _, v := range t.Values() {
				vals = append(vals, v.Name)
			}
			sort.Strings(vals)
			fmt.Fprintf(&b, "enum %s {\n", name)
			for _, v := range vals {
				fmt.Fprintf(&b, "  %s\n", v)
			}
			b.WriteString("}\n")
		case *graphql.Union:
			var members []string
			for _, m := range t.Types() {
				members = append(members, m.Name())
			}
			sort.Strings(members)
			fmt.Fprintf(&b, "union %s = %s\n", name, strings.Join(members, " | "))
		case *graphql.InputObject:
			fields := t.Fields()
			fmt.Fprintf(&b, "input %s {\n", name)
			for _, fn := range sortedKeys(fields) {
				f := fields[fn]
				fmt.Fprintf(&b, "  %s: %s", fn, f.Type.String())
				if f.DefaultValue != nil {
					fmt.Fprintf(&b, " = %v", f.DefaultValue)
				}
				b.WriteString("\n")
			}
			b.WriteString("}\n")
		case *graphql.Object:
			implements := ""
			if is := t.Interfaces(); len(is) > 0 {
				names := make([]string, len(is))
				for i, in := range is {
					names[i] = in.Name()
				}
				implements = " implements " + strings.Join(names, " & ")
			}
			fmt.Fprintf(&b, "type %s%s {\n", name, implements)
			printFields(&b, t.Fields())
		case *graphql.Interface:
			fmt.Fprintf(&b, "interface %s {\n", name)
			printFields(&b, t.Fields())
		}
	}
	return b.String()
}

// printFields writes the fields of an object or interface type in name
// order and closes the type.
func printFields(b *strings.Builder, fields graphql.FieldDefinitionMap) {
	for _, fn := range sortedKeys(fields) {
		f := fields[fn]
		fmt.Fprintf(b, "  %s%s: %s\n", fn, printArgs(f.Args), f.Type.String())
	}
	b.WriteString("}\n")
}

func printArgs(args []*graphql.Argument) string {
	if len(args) == 0 {
		return ""
	}
	parts := make([]string, 0, len(args))
	for _, a := range args {
		p := a.Name() + ": " + a.Type.String()
		if a.DefaultValue != nil {
			p += fmt.Sprintf(" = %v", a.DefaultValue)
		}
		parts = append(parts, p)
	}
	sort.Strings(parts)
	return "(" + strings.Join(parts, ", ") + ")"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
