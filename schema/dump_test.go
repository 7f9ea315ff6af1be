package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// dump writes a Model as stable text for golden files: every type, field,
// argument and binding, with positions of the application's definitions
// (built-in positions refer to the prelude and are left out).
func dump(m *Model) string {
	var b strings.Builder
	pos := func(builtin bool, p ast.Position) string {
		if builtin {
			return " builtin"
		}
		return fmt.Sprintf(" @%d:%d", p.Line, p.Column)
	}
	fieldPos := func(builtin bool, p ast.Position) string {
		if builtin {
			return ""
		}
		return pos(false, p)
	}
	desc := func(indent, d string) {
		if d != "" {
			b.WriteString(indent + strconv.Quote(d) + "\n")
		}
	}
	types := func(word string, ts []*Type) {
		for _, t := range ts {
			b.WriteString(word + " " + t.Name + pos(t.Builtin, t.Pos) + "\n")
			desc("  ", t.Description)
			if len(t.Interfaces) > 0 {
				b.WriteString("  implements " + strings.Join(t.Interfaces, " & ") + "\n")
			}
			for _, set := range t.Indices {
				b.WriteString("  index [" + strings.Join(set, ", ") + "]\n")
			}
			for _, f := range t.Fields {
				b.WriteString("  " + dumpField(f) + fieldPos(t.Builtin, f.Pos) + "\n")
				desc("    ", f.Description)
			}
		}
	}
	types("record", m.Types)
	types("object", m.Objects)
	for _, in := range m.Interfaces {
		b.WriteString("interface " + in.Name + pos(false, in.Pos) + " implemented by [" + strings.Join(in.Impls, ", ") + "]\n")
		desc("  ", in.Description)
		for _, f := range in.Fields {
			b.WriteString("  " + dumpField(f) + pos(false, f.Pos) + "\n")
		}
	}
	for _, e := range m.Enums {
		b.WriteString("enum " + e.Name + pos(e.Builtin, e.Pos) + ": " + strings.Join(e.Values, " ") + "\n")
		desc("  ", e.Description)
	}
	for _, in := range m.Inputs {
		b.WriteString("input " + in.Name + pos(in.Builtin, in.Pos) + "\n")
		desc("  ", in.Description)
		for _, a := range in.Fields {
			b.WriteString("  " + dumpArg(a) + fieldPos(in.Builtin, a.Pos) + "\n")
		}
	}
	for _, s := range m.Scalars {
		b.WriteString("scalar " + s + "\n")
	}
	for _, root := range []struct {
		word   string
		fields []*Field
	}{{"query", m.Queries}, {"mutation", m.Mutations}} {
		for _, f := range root.fields {
			b.WriteString(root.word + " " + dumpField(f) + pos(false, f.Pos) + "\n")
			desc("  ", f.Description)
			for _, a := range f.Args {
				b.WriteString("  arg " + dumpArg(a) + pos(false, a.Pos) + "\n")
				desc("    ", a.Description)
			}
			if f.Fn != nil {
				fmt.Fprintf(&b, "  fn %s %s env [%s]\n", f.Fn.Name, f.Fn.Version, quoteAll(f.Fn.Env))
			}
		}
	}
	return b.String()
}

func dumpField(f *Field) string {
	s := f.Name + ": " + typeString(f.Type, f.List, f.NonNull, f.ElemNonNull) + " " + [...]string{"scalar", "enum", "ref", "object"}[f.Kind]
	if f.Unique {
		s += " unique"
	}
	if f.Hidden {
		s += " hidden"
	}
	for _, d := range f.Directives {
		if d.Name != "unique" && d.Name != "fn" {
			s += " @" + d.Name
			for _, a := range d.Arguments {
				s += " " + a.Name + "=" + a.Value.String()
			}
		}
	}
	return s
}

func dumpArg(a *Arg) string {
	s := a.Name + ": " + typeString(a.Type, a.List, a.NonNull, a.ElemNonNull)
	if a.Default != nil {
		s += " = " + a.Default.String()
	}
	return s
}

func typeString(name string, list, nonNull, elemNonNull bool) string {
	return typeText(&Field{Type: name, List: list, NonNull: nonNull, ElemNonNull: elemNonNull})
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}
