package schema

// buildRoot builds the fields an application adds to Query or Mutation, in
// source order. Their names may not be those of the built-in root fields
// (find, get, upsert, …) in either root, so that REST's /fn/{root}/{fn} and
// readers of the schema never have to guess which one is meant.
func (b *builder) buildRoot(n *named) []*Field {
	var fields []*Field
	seen := map[string]*Field{}
	for _, p := range n.parts() {
		b.checkDirectives(p.Directives, whereRootType, "type "+n.name)
	}
	for _, fd := range n.fields() {
		subject := "field " + n.name + "." + fd.Name
		if prev, dup := seen[fd.Name]; dup {
			b.errs.at(fd.Position, "%s is already defined at %d:%d", subject, prev.Pos.Line, prev.Pos.Column)
			continue
		}
		switch {
		case isBuiltinRootField(fd.Name):
			b.errs.at(fd.Position, "%s: %s is a built-in root field", subject, fd.Name)
		default:
			if msg := reservedFieldName(fd.Name, false); msg != "" {
				b.errs.at(fd.Position, "%s: %s", subject, msg)
			}
		}
		f := &Field{
			Name:        fd.Name,
			Description: fd.Description,
			Directives:  fd.Directives,
			Pos:         posValue(fd.Position),
		}
		r, k, _ := b.outputRef(subject, fd.Type, fd.Position)
		if nb := b.named[r.name]; nb != nil && nb.kind == kindInterface {
			b.errs.at(r.pos, "%s: a Query or Mutation field cannot be typed by the interface %s: a function's answer names no implementing type", subject, r.name)
		}
		f.Type, f.Kind, f.List, f.NonNull, f.ElemNonNull = r.name, k, r.list, r.nonNull, r.elemNonNull
		args := map[string]bool{}
		for _, ad := range fd.Arguments {
			asubject := "argument " + n.name + "." + fd.Name + "(" + ad.Name + ")"
			if args[ad.Name] {
				b.errs.at(ad.Position, "%s is given twice", asubject)
				continue
			}
			args[ad.Name] = true
			f.Args = append(f.Args, b.arg(asubject, "an argument's type", ad.Name, ad.Description, ad.Type, ad.DefaultValue, ad.Position))
			b.checkDirectives(ad.Directives, whereArg, asubject)
		}
		ds := b.checkDirectives(fd.Directives, whereRootField, subject)
		if d := ds["fn"]; d != nil {
			f.Fn = b.fnBinding(subject, d)
		}
		f.Public = ds["public"] != nil
		if d := ds["trigger"]; d != nil {
			f.Trigger = b.triggerConfig(subject, d)
		}
		seen[f.Name] = f
		fields = append(fields, f)
	}
	return fields
}
