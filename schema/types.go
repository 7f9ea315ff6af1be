package schema

import "github.com/vektah/gqlparser/v2/ast"

// typeRef is a field or argument type: a named type, optionally a list,
// with the non-null marks. Lists of lists are not supported.
type typeRef struct {
	name                       string
	list, nonNull, elemNonNull bool
	pos                        *ast.Position
}

// refOf unwraps t; ok is false for a list of lists.
func refOf(t *ast.Type) (r typeRef, ok bool) {
	if t == nil {
		return r, false
	}
	r = typeRef{nonNull: t.NonNull, pos: t.Position}
	if t.Elem == nil {
		r.name = t.NamedType
		return r, true
	}
	if t.Elem.Elem != nil {
		return r, false
	}
	r.list, r.elemNonNull, r.name = true, t.Elem.NonNull, t.Elem.NamedType
	return r, true
}

// outputRef resolves the type of a field of an object or root type and
// returns its kind; ok is false after a reported problem.
func (b *builder) outputRef(subject string, t *ast.Type, pos *ast.Position) (typeRef, Kind, bool) {
	r, ok := refOf(t)
	if !ok {
		b.errs.at(pos, "%s: lists of lists are not supported", subject)
		return r, 0, false
	}
	n, ok := b.named[r.name]
	if !ok {
		if !b.refused[r.name] {
			b.errs.at(r.pos, "%s: unknown type %s", subject, r.name)
		}
		return r, 0, false
	}
	switch n.kind {
	case kindScalar:
		return r, KindScalar, true
	case kindEnum:
		return r, KindEnum, true
	case kindRecord:
		return r, KindRef, true
	case kindObject:
		return r, KindObject, true
	case kindInterface:
		return r, KindRef, true
	case kindInput:
		b.errs.at(r.pos, "%s: %s is an input type; a field's type must be a scalar, enum, record or object type", subject, r.name)
	default:
		b.errs.at(r.pos, "%s: the root type %s cannot be a field's type", subject, r.name)
	}
	return r, 0, false
}

// buildType builds a record type or an embedded object type.
func (b *builder) buildType(n *named) *Type {
	record := n.kind == kindRecord
	t := &Type{
		Name:    n.name,
		Builtin: n.builtin,
		fields:  map[string]*Field{},
	}
	if n.def != nil {
		t.Description = n.def.Description
		t.Pos = posValue(n.def.Position)
	}
	where := whereObjectField
	if record {
		where = whereRecordField
	}
	for _, fd := range n.fields() {
		subject := "field " + n.name + "." + fd.Name
		if prev, dup := t.fields[fd.Name]; dup {
			b.errs.at(fd.Position, "%s is already defined at %d:%d", subject, prev.Pos.Line, prev.Pos.Column)
			continue
		}
		if record && declaresMeta(fd) {
			continue // core: Core means exactly the implicit field
		}
		if msg := reservedFieldName(fd.Name, record); msg != "" {
			b.errs.at(fd.Position, "%s: %s", subject, msg)
		}
		if len(fd.Arguments) > 0 {
			b.errs.at(fd.Arguments[0].Position, "%s: arguments are allowed only on Query and Mutation fields", subject)
		}
		f := &Field{
			Name:        fd.Name,
			Description: fd.Description,
			Directives:  fd.Directives,
			Pos:         posValue(fd.Position),
			Hidden:      n.builtin && isBuiltinHidden(n.name, fd.Name),
		}
		r, k, ok := b.outputRef(subject, fd.Type, fd.Position)
		f.Type, f.Kind, f.List, f.NonNull, f.ElemNonNull = r.name, k, r.list, r.nonNull, r.elemNonNull
		ds := b.checkDirectives(fd.Directives, where, subject)
		if ok {
			b.fieldRules(subject, f, ds)
		}
		if d := ds["unique"]; d != nil && ok {
			f.Unique = true
			b.checkUnique(subject, f, d)
		}
		t.Fields = append(t.Fields, f)
		t.fields[f.Name] = f
	}
	var typeDirectives ast.DirectiveList
	for _, p := range n.parts() {
		typeDirectives = append(typeDirectives, p.Directives...)
	}
	where = whereObject
	if record {
		where = whereRecord
	}
	ds := b.checkDirectives(typeDirectives, where, "type "+n.name)
	if d := ds["indices"]; d != nil {
		t.Indices = b.indices(t, d)
	}
	if d := ds["access"]; d != nil {
		b.access = append(b.access, pendingRules{t, d})
	}
	if d := ds["trigger"]; d != nil {
		t.Trigger = b.triggerConfig("type "+n.name, d)
	}
	return t
}

// checkUnique decides what @unique accepts: scalar fields other than Json,
// enum fields, single references (one-to-one), and lists of those scalars
// and enums, where each element is unique. It refuses lists of references,
// embedded objects and Json values.
func (b *builder) checkUnique(subject string, f *Field, d *ast.Directive) {
	switch {
	case f.Kind == KindObject:
		b.errs.at(d.Position, "%s: @unique is not allowed on an embedded object", subject)
	case f.Kind == KindRef && f.List:
		b.errs.at(d.Position, "%s: @unique is not allowed on a list of references", subject)
	case IsJSONScalar(f.Type):
		article := map[string]string{"Json": "a", "Any": "an"}[f.Type]
		b.errs.at(d.Position, "%s: @unique is not allowed on %s %s field", subject, article, f.Type)
	case f.Hidden:
		b.errs.at(d.Position, "%s: @unique is not allowed on a hidden field", subject)
	}
}

// posValue copies a position (the zero Position for nil).
func posValue(p *ast.Position) ast.Position {
	if p == nil {
		return ast.Position{}
	}
	return *p
}
