package schema

// buildEnum builds an enum; its values are those of the definition and its
// extensions in source order.
func (b *builder) buildEnum(n *named) *Enum {
	e := &Enum{Name: n.name, Builtin: n.builtin}
	if n.def != nil {
		e.Description = n.def.Description
		e.Pos = posValue(n.def.Position)
	}
	seen := map[string]bool{}
	for _, p := range n.parts() {
		b.checkDirectives(p.Directives, whereEnum, "enum "+n.name)
		for _, v := range p.EnumValues {
			subject := "enum value " + n.name + "." + v.Name
			switch {
			case seen[v.Name]:
				b.errs.at(v.Position, "%s is already defined", subject)
				continue
			case v.Name == "true" || v.Name == "false" || v.Name == "null":
				b.errs.at(v.Position, "%s: true, false and null cannot be enum values", subject)
			default:
				if msg := reservedFieldName(v.Name, false); msg != "" {
					b.errs.at(v.Position, "%s: %s", subject, msg)
				}
			}
			b.checkDirectives(v.Directives, whereEnumValue, subject)
			seen[v.Name] = true
			e.Values = append(e.Values, v.Name)
		}
	}
	if len(e.Values) == 0 {
		b.errs.at(n.pos(), "enum %s has no values", n.name)
	}
	return e
}
