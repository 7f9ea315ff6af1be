package schema

import (
	"slices"

	"github.com/vektah/gqlparser/v2/ast"
)

// buildInterface builds an interface: its fields take what record fields
// take (scalars, enums, record types, embedded objects), without
// directives; `core: Core` may be declared, as in a record type.
func (b *builder) buildInterface(n *named) *Interface {
	in := &Interface{Name: n.name, fields: map[string]*Field{}}
	if n.def != nil {
		in.Description = n.def.Description
		in.Pos = posValue(n.def.Position)
	}
	for _, fd := range n.fields() {
		subject := "field " + n.name + "." + fd.Name
		if prev, dup := in.fields[fd.Name]; dup {
			b.errs.at(fd.Position, "%s is already defined at %d:%d", subject, prev.Pos.Line, prev.Pos.Column)
			continue
		}
		if declaresMeta(fd) {
			continue // every record has core
		}
		if msg := reservedFieldName(fd.Name, true); msg != "" {
			b.errs.at(fd.Position, "%s: %s", subject, msg)
		}
		if len(fd.Arguments) > 0 {
			b.errs.at(fd.Arguments[0].Position, "%s: arguments are allowed only on Query and Mutation fields", subject)
		}
		if len(fd.Directives) > 0 {
			b.errs.at(fd.Directives[0].Position, "%s: directives belong on the fields of the implementing types, not on an interface's", subject)
		}
		r, k, ok := b.outputRef(subject, fd.Type, fd.Position)
		if !ok {
			continue
		}
		f := &Field{Name: fd.Name, Description: fd.Description, Type: r.name, Kind: k,
			List: r.list, NonNull: r.nonNull, ElemNonNull: r.elemNonNull, Pos: posValue(fd.Position)}
		in.Fields = append(in.Fields, f)
		in.fields[f.Name] = f
	}
	for _, p := range n.parts() {
		if len(p.Directives) > 0 {
			b.errs.at(p.Directives[0].Position, "interface %s: directives are not allowed on interfaces", n.name)
		}
	}
	return in
}

// checkImplements checks every `implements` of the application's record
// types (their extensions' too): each names an interface, and the type has
// every field of the interface, of the same type, as non-null as the
// interface's or more (GraphQL's rule; lists keep their element's
// non-null mark at least). Only record types implement interfaces.
func (b *builder) checkImplements(m *Model) {
	names := make([]string, 0, len(b.named))
	for name := range b.named {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		n := b.named[name]
		if n.builtin {
			continue
		}
		var impls []string
		var pos *ast.Position
		for _, p := range n.parts() {
			if len(p.Interfaces) > 0 && pos == nil {
				pos = p.Position
			}
			for _, i := range p.Interfaces {
				if !slices.Contains(impls, i) {
					impls = append(impls, i)
				}
			}
		}
		if len(impls) == 0 || n.kind == kindInterface {
			continue
		}
		t, ok := m.types[name]
		if !ok || n.kind != kindRecord {
			b.errs.at(pos, "%s cannot implement interfaces: only record types do", name)
			continue
		}
		for _, i := range impls {
			in, ok := m.ifaces[i]
			if !ok {
				if other, known := b.named[i]; known {
					b.errs.at(pos, "type %s implements %s: %s is %s, not an interface", name, i, i, other.kind)
				} else if !b.refused[i] {
					b.errs.at(pos, "type %s implements %s: unknown interface %s", name, i, i)
				}
				continue
			}
			for _, want := range in.Fields {
				got, ok := t.Field(want.Name)
				switch {
				case !ok:
					b.errs.at(pos, "type %s implements %s but has no field %s (%s)", name, i, want.Name, typeText(want))
				case got.Hidden || (got.Rules != nil && got.Rules.Secret):
					b.errs.at(posPtr(got.Pos), "field %s.%s is write-only (@secret): it cannot implement the field %s of the interface %s, which is read and filtered", name, want.Name, want.Name, i)
				case got.Type != want.Type || got.List != want.List || (want.NonNull && !got.NonNull) || (want.ElemNonNull && !got.ElemNonNull):
					b.errs.at(posPtr(got.Pos), "field %s.%s is %s; the interface %s declares it %s", name, want.Name, typeText(got), i, typeText(want))
				}
			}
			t.Interfaces = append(t.Interfaces, i)
			in.Impls = append(in.Impls, name)
		}
	}
	for _, in := range m.Interfaces {
		slices.Sort(in.Impls)
	}
}

// posPtr returns p as a pointer for errs.at.
func posPtr(p ast.Position) *ast.Position { return &p }
