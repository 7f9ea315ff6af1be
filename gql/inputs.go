package gql

import (
	"strings"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/schema"
)

// coreInputFields are the metadata a client may send back in `core`:
// only id and impl are used; the rest is accepted and ignored, so that a
// record read can be sent back as is.
var coreInputFields = []string{"id", "impl", "created", "updated", "trashed", "createdBy", "app", "release",
	"instance", "publisherRealm", "publisherApp", "publisherRelease", "instanceId"}

// buildInputs creates every input type: declared ones, one per record and
// embedded object type (<T>Input, all fields optional), CoreInput and
// CoreUpsertInputUnion.
func (b *builder) buildInputs() {
	coreFields := graphql.InputObjectConfigFieldMap{}
	for _, name := range coreInputFields {
		coreFields[name] = &graphql.InputObjectFieldConfig{Type: graphql.String}
	}
	coreFields["id"].Description = "The record's id; generated when absent."
	b.inputs["CoreInput"] = graphql.NewInputObject(graphql.InputObjectConfig{
		Name:        "CoreInput",
		Description: "Record metadata in input: only id and impl are used.",
		Fields:      coreFields,
	})
	for _, in := range b.m.Inputs {
		// A built-in input named like a generated one (URLInput) is served
		// by the generated type, a superset of it.
		if _, generated := b.m.Type(strings.TrimSuffix(in.Name, "Input")); generated && in.Builtin {
			continue
		}
		b.inputs[in.Name] = b.declaredInput(in)
	}
	for _, t := range b.m.Objects {
		b.inputs[t.Name+"Input"] = b.typeInput(t, false)
	}
	for _, t := range b.m.Types {
		b.inputs[t.Name+"Input"] = b.typeInput(t, true)
	}
	for _, in := range b.m.Interfaces {
		b.inputs[in.Name+"Input"] = graphql.NewInputObject(graphql.InputObjectConfig{
			Name:        in.Name + "Input",
			Description: "A reference to a record implementing " + in.Name + ": core.id names it, core.impl its type (needed only where two implementing types hold that id).",
			Fields: graphql.InputObjectConfigFieldMap{
				"core": &graphql.InputObjectFieldConfig{Type: graphql.NewNonNull(b.inputs["CoreInput"])},
			},
		})
	}
	union := graphql.InputObjectConfigFieldMap{}
	for _, t := range b.m.Types {
		union[t.Name] = &graphql.InputObjectFieldConfig{
			Type:        graphql.NewList(graphql.NewNonNull(b.inputs[t.Name+"Input"])),
			Description: "Records of type " + t.Name + " (a single object is accepted too).",
		}
	}
	b.inputs["CoreUpsertInputUnion"] = graphql.NewInputObject(graphql.InputObjectConfig{
		Name:        "CoreUpsertInputUnion",
		Description: "Records to upsert, by type.",
		Fields:      union,
	})
}

// declaredInput returns an input type the schema declares.
func (b *builder) declaredInput(in *schema.Input) *graphql.InputObject {
	return graphql.NewInputObject(graphql.InputObjectConfig{
		Name:        in.Name,
		Description: in.Description,
		Fields: graphql.InputObjectConfigFieldMapThunk(func() graphql.InputObjectConfigFieldMap {
			fields := graphql.InputObjectConfigFieldMap{}
			for _, a := range in.Fields {
				fc := &graphql.InputObjectFieldConfig{Type: wrap(b.namedInput(a.Type), a.List, a.NonNull, a.ElemNonNull)}
				if a.Default != nil {
					if v, err := a.Default.Value(nil); err == nil {
						fc.DefaultValue = v
					}
				}
				fields[a.Name] = fc
			}
			return fields
		}),
	})
}

// typeInput returns <T>Input for a record or embedded object type. Every
// field is optional so that an update sends only what changes; required
// fields are checked when a record is created. A reference field takes a
// nested record input (one holding only core.id references an existing
// record); the hidden password field takes PasswordInput (other hidden fields, write-only
// secrets, their own type).
func (b *builder) typeInput(t *schema.Type, record bool) *graphql.InputObject {
	return graphql.NewInputObject(graphql.InputObjectConfig{
		Name: t.Name + "Input",
		Fields: graphql.InputObjectConfigFieldMapThunk(func() graphql.InputObjectConfigFieldMap {
			fields := graphql.InputObjectConfigFieldMap{}
			if record {
				fields["core"] = &graphql.InputObjectFieldConfig{Type: b.inputs["CoreInput"]}
			}
			for _, f := range t.Fields {
				var base graphql.Input
				switch {
				case f.Hidden && t.Name == "Account":
					base = b.inputs["PasswordInput"]
				case f.Kind == schema.KindRef || f.Kind == schema.KindObject:
					base = b.inputs[f.Type+"Input"]
				default:
					base = b.namedInput(f.Type)
				}
				fields[f.Name] = &graphql.InputObjectFieldConfig{
					Type:        wrap(base, f.List, false, f.ElemNonNull),
					Description: f.Description,
				}
			}
			return fields
		}),
	})
}
