package schema

import "github.com/corehq/core/store/arcql"

var _ arcql.Schema = (*Model)(nil)

// Field describes field name of the record type or embedded object type
// typ to the filter language. For a record type it also answers the
// metadata names core.id, core.created, core.updated, core.trashed,
// core.createdBy and core.instanceId; embedded objects have no metadata.
//
// An interface answers its own fields and the metadata: a filter over an
// interface names only what every implementation has.
func (m *Model) Field(typ, name string) (arcql.Field, bool) {
	var fields map[string]*Field
	t, record := m.types[typ]
	in, iface := m.ifaces[typ]
	switch {
	case record:
		fields = t.fields
	case iface:
		fields = in.fields
	default:
		o, ok := m.objects[typ]
		if !ok {
			return arcql.Field{}, false
		}
		fields = o.fields
	}
	if record || iface {
		switch name {
		case "core.id", "core.createdBy", "core.instanceId":
			return arcql.Field{Kind: arcql.FieldID}, true
		case "core.created", "core.updated", "core.trashed":
			return arcql.Field{Kind: arcql.FieldTime}, true
		}
	}
	f, ok := fields[name]
	if !ok {
		return arcql.Field{}, false
	}
	af := arcql.Field{List: f.List, Hidden: f.Hidden}
	switch f.Kind {
	case KindRef:
		af.Kind, af.Target = arcql.FieldRef, f.Type
		if _, iface := m.ifaces[f.Type]; iface {
			// A reference typed by an interface filters by the id it holds;
			// a hop through it would need one target type.
			af.Kind, af.Target = arcql.FieldID, ""
		}
	case KindObject:
		af.Kind, af.Target = arcql.FieldObject, f.Type
	case KindEnum:
		af.Kind = arcql.FieldEnum
	default:
		af.Kind = scalarFieldKind(f.Type)
	}
	return af, true
}

// scalarFieldKind maps a scalar to its filter kind; Email and custom
// scalars filter as strings.
func scalarFieldKind(scalar string) arcql.FieldKind {
	switch scalar {
	case "ID":
		return arcql.FieldID
	case "Int", "Long":
		return arcql.FieldInt
	case "Float":
		return arcql.FieldFloat
	case "Boolean":
		return arcql.FieldBoolean
	case "DateTime":
		return arcql.FieldTime
	case "Json", "Any":
		return arcql.FieldJSON
	}
	return arcql.FieldString
}
