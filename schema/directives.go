package schema

import (
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/corehq/core/internal/names"
)

// where is a place a directive may stand.
type where int

const (
	whereRecord where = iota
	whereObject
	whereRecordField
	whereObjectField
	whereRootType
	whereRootField
	whereArg
	whereEnum
	whereEnumValue
	whereInput
	whereInputField
	whereScalar
)

// placement says where each known directive may stand, and in what words.
func placement(name string) (allowed func(where) bool, rule string) {
	switch name {
	case "fn":
		return func(w where) bool { return w == whereRootField }, "Query and Mutation fields"
	case "indices", "access":
		return func(w where) bool { return w == whereRecord }, "record types"
	case "unique":
		return func(w where) bool { return w == whereRecordField }, "fields of record types"
	case "public":
		return func(w where) bool { return w == whereRootField }, "Query and Mutation fields"
	case "notNull", "notEmpty", "length", "pattern", "email", "past", "future", "immutable", "secret":
		return func(w where) bool { return w == whereRecordField }, "fields of record types"
	case "trigger":
		return func(w where) bool { return w == whereRecord || w == whereRootField }, "record types and Mutation fields"
	default: // deprecated
		return func(w where) bool {
			return w == whereRecordField || w == whereObjectField || w == whereRootField
		}, "fields"
	}
}

// declareDirective accepts an application's declaration of a built-in
// directive when it is identical to core's (descriptions aside), so that
// SDL written for tools that want declarations still loads.
func (b *builder) declareDirective(d *ast.DirectiveDefinition) {
	decl, ok := b.directives[d.Name]
	switch {
	case !ok:
		b.errs.at(d.Position, "directive @%s: custom directives are not supported", d.Name)
	case decl.Position != nil && decl.Position.Src != nil && !decl.Position.Src.BuiltIn:
		b.errs.at(d.Position, "directive @%s is already declared at %s", d.Name, posString(decl.Position))
	case directiveSignature(d) != directiveSignature(decl):
		b.errs.at(d.Position, "directive @%s is built in: declare it exactly as `directive %s` or leave it out", d.Name, directiveSignature(decl))
	default:
		b.directives[d.Name] = d // later declarations are duplicates
	}
}

// directiveSignature writes a directive declaration without descriptions,
// its locations sorted.
func directiveSignature(d *ast.DirectiveDefinition) string {
	var s strings.Builder
	s.WriteString("@" + d.Name)
	if len(d.Arguments) > 0 {
		s.WriteByte('(')
		for i, a := range d.Arguments {
			if i > 0 {
				s.WriteString(", ")
			}
			s.WriteString(a.Name + ": " + a.Type.String())
			if a.DefaultValue != nil {
				s.WriteString(" = " + a.DefaultValue.String())
			}
		}
		s.WriteByte(')')
	}
	if d.IsRepeatable {
		s.WriteString(" repeatable")
	}
	locs := make([]string, len(d.Locations))
	for i, l := range d.Locations {
		locs[i] = string(l)
	}
	slices.Sort(locs)
	s.WriteString(" on " + strings.Join(locs, " | "))
	return s.String()
}

// checkDirectives checks the directives at a place and returns the valid
// ones by name.
func (b *builder) checkDirectives(ds ast.DirectiveList, w where, subject string) map[string]*ast.Directive {
	valid := map[string]*ast.Directive{}
	seen := map[string]bool{}
	for _, d := range ds {
		decl, ok := b.directives[d.Name]
		if !ok {
			b.errs.at(d.Position, "%s: unknown directive @%s", subject, d.Name)
			continue
		}
		if allowed, rule := placement(d.Name); !allowed(w) {
			b.errs.at(d.Position, "%s: @%s is allowed only on %s", subject, d.Name, rule)
			continue
		}
		if seen[d.Name] && !decl.IsRepeatable {
			b.errs.at(d.Position, "%s: @%s may appear only once", subject, d.Name)
			continue
		}
		seen[d.Name] = true
		if b.checkArguments(d, decl, subject) {
			valid[d.Name] = d
		}
	}
	return valid
}

// checkArguments checks a directive's arguments against its declaration.
func (b *builder) checkArguments(d *ast.Directive, decl *ast.DirectiveDefinition, subject string) bool {
	ok := true
	given := map[string]bool{}
	for _, a := range d.Arguments {
		ad := decl.Arguments.ForName(a.Name)
		switch {
		case ad == nil:
			b.errs.at(a.Position, "%s: @%s has no argument %s", subject, d.Name, a.Name)
			ok = false
		case given[a.Name]:
			b.errs.at(a.Position, "%s: @%s: argument %s is given twice", subject, d.Name, a.Name)
			ok = false
		default:
			if problem := b.checkLiteral(a.Value, ad.Type); problem != "" {
				b.errs.at(valuePos(a.Value, a.Position), "%s: @%s argument %s: %s", subject, d.Name, a.Name, problem)
				ok = false
			}
		}
		given[a.Name] = true
	}
	for _, ad := range decl.Arguments {
		if ad.Type.NonNull && ad.DefaultValue == nil && !given[ad.Name] {
			b.errs.at(d.Position, "%s: @%s needs the argument %s", subject, d.Name, ad.Name)
			ok = false
		}
	}
	return ok
}

// valuePos is the position of v, or fallback.
func valuePos(v *ast.Value, fallback *ast.Position) *ast.Position {
	if v != nil && v.Position != nil {
		return v.Position
	}
	return fallback
}

// listItems applies GraphQL's input coercion of a single value to a list
// of one.
func listItems(v *ast.Value) []*ast.Value {
	if v == nil || v.Kind == ast.NullValue {
		return nil
	}
	if v.Kind != ast.ListValue {
		return []*ast.Value{v}
	}
	items := make([]*ast.Value, len(v.Children))
	for i, c := range v.Children {
		items[i] = c.Value
	}
	return items
}

// indices reads and checks @indices(sets: …) of a record type: every set
// names at least one field, each field of t at most once; hidden fields and
// embedded objects cannot be indexed, and a set holds at most one list
// field (a compound index over two arrays cannot be built by MongoDB).
// A set declared twice is an error.
func (b *builder) indices(t *Type, d *ast.Directive) [][]string {
	subject := "type " + t.Name
	var sets [][]string
	declared := map[string]bool{}
	for _, setValue := range listItems(d.Arguments.ForName("sets").Value) {
		pos := valuePos(setValue, d.Position)
		var set []string
		var lists []string
		ok := true
		for _, item := range listItems(setValue) {
			name := item.Raw
			ipos := valuePos(item, pos)
			f, exists := t.Field(name)
			switch {
			case !exists:
				b.errs.at(ipos, "%s: @indices names %q, which is not a field of %s", subject, name, t.Name)
				ok = false
				continue
			case f.Hidden:
				b.errs.at(ipos, "%s: @indices: %s is hidden and cannot be indexed", subject, name)
				ok = false
			case f.Kind == KindObject:
				b.errs.at(ipos, "%s: @indices: %s is an embedded object and cannot be indexed", subject, name)
				ok = false
			case slices.Contains(set, name):
				b.errs.at(ipos, "%s: @indices: %s appears twice in one index", subject, name)
				ok = false
			}
			if f.List && !slices.Contains(lists, name) {
				lists = append(lists, name)
			}
			set = append(set, name)
		}
		switch {
		case len(set) == 0 && ok:
			b.errs.at(pos, "%s: @indices: an index needs at least one field", subject)
			ok = false
		case len(lists) > 1:
			b.errs.at(pos, "%s: @indices: an index may hold at most one list field, not %s", subject, strings.Join(lists, " and "))
			ok = false
		}
		key := strings.Join(set, "\x00")
		if ok && declared[key] {
			b.errs.at(pos, "%s: @indices: the index [%s] is declared twice", subject, strings.Join(set, ", "))
			ok = false
		}
		declared[key] = true
		if ok {
			sets = append(sets, set)
		}
	}
	return sets
}

// fnBinding reads @fn(name, version, env). name and version become part of
// admin paths and image tags, so they follow the rule of every name
// (names.Valid), the one fn publishes versions under; env names must not
// be empty.
func (b *builder) fnBinding(subject string, d *ast.Directive) *FnBinding {
	fn := &FnBinding{}
	ok := true
	for _, arg := range [...]struct {
		name string
		to   *string
	}{{"name", &fn.Name}, {"version", &fn.Version}} {
		a := d.Arguments.ForName(arg.name)
		*arg.to = a.Value.Raw
		if !names.Valid(a.Value.Raw) {
			b.errs.at(valuePos(a.Value, d.Position), "%s: @fn %s %q: use %s", subject, arg.name, a.Value.Raw, names.Rule)
			ok = false
		}
	}
	if a := d.Arguments.ForName("env"); a != nil {
		for _, item := range listItems(a.Value) {
			if item.Raw == "" {
				b.errs.at(valuePos(item, a.Position), "%s: @fn env: a name must not be empty", subject)
				ok = false
				continue
			}
			fn.Env = append(fn.Env, item.Raw)
		}
	}
	if !ok {
		return nil
	}
	return fn
}

// triggerConfig reads @trigger(config: {before, after}); the fields it
// names are checked once every root field is known (checkTriggers).
func (b *builder) triggerConfig(subject string, d *ast.Directive) *Trigger {
	a := d.Arguments.ForName("config")
	if a == nil || a.Value == nil {
		return nil
	}
	tr := &Trigger{Subject: subject, Pos: posValue(d.Position)}
	for _, child := range a.Value.Children {
		ref := &TriggerRef{}
		for _, c := range child.Value.Children {
			switch c.Name {
			case "type":
				ref.Type = c.Value.Raw
			case "field":
				ref.Field = c.Value.Raw
			}
		}
		switch child.Name {
		case "before":
			tr.Before = ref
		case "after":
			tr.After = ref
		}
	}
	if tr.Before == nil && tr.After == nil {
		b.errs.at(d.Position, "%s: @trigger names neither before nor after", subject)
		return nil
	}
	return tr
}

// checkTriggers checks the fields the triggers of m name: a Query or
// Mutation field bound by @fn; before's answers Boolean.
func (b *builder) checkTriggers(m *Model) {
	check := func(tr *Trigger) {
		if tr == nil {
			return
		}
		for _, side := range []struct {
			name string
			ref  *TriggerRef
		}{{"before", tr.Before}, {"after", tr.After}} {
			if side.ref == nil {
				continue
			}
			f := m.RootField(side.ref.Type, side.ref.Field)
			switch {
			case f == nil:
				b.errs.at(&tr.Pos, "%s: @trigger %s: %s.%s is not a field of the schema", tr.Subject, side.name, side.ref.Type, side.ref.Field)
			case f.Fn == nil:
				b.errs.at(&tr.Pos, "%s: @trigger %s: %s.%s is not bound to a function (@fn)", tr.Subject, side.name, side.ref.Type, side.ref.Field)
			case f.Trigger != nil:
				b.errs.at(&tr.Pos, "%s: @trigger %s: %s.%s has a trigger of its own", tr.Subject, side.name, side.ref.Type, side.ref.Field)
			case side.name == "before" && (f.Type != "Boolean" || f.List):
				b.errs.at(&tr.Pos, "%s: @trigger before: %s.%s must answer Boolean", tr.Subject, side.ref.Type, side.ref.Field)
			}
		}
	}
	for _, t := range m.Types {
		check(t.Trigger)
	}
	for _, f := range m.Queries {
		if f.Trigger != nil {
			b.errs.at(&f.Trigger.Pos, "%s: @trigger is allowed only on record types and Mutation fields", f.Trigger.Subject)
		}
	}
	for _, f := range m.Mutations {
		check(f.Trigger)
	}
}
