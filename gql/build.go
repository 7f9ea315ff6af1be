package gql

import (
	"fmt"
	"sync"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/schema"
)

// builder turns a Model into graphql-go types. Types refer to each other
// through field thunks, so the order of construction does not matter.
type builder struct {
	m   *schema.Model
	cfg Config

	scalars  map[string]*graphql.Scalar
	enums    map[string]*graphql.Enum
	objects  map[string]*graphql.Object
	ifaces   map[string]*graphql.Interface
	inputs   map[string]*graphql.InputObject
	typeEnum *graphql.Enum
	union    *graphql.Union
	core     *graphql.Object
	email    *graphql.Object
	pageInfo *graphql.Object
	conn     *graphql.Object
	// accessToken is the answer of login and loginByEmail.
	accessToken *graphql.Object
	// direct collects the fields the compiled executor may read without
	// their resolvers (plan_direct.go).
	direct directFields
}

func newBuilder(m *schema.Model, cfg Config) *builder {
	b := &builder{
		m:   m,
		cfg: cfg,
		scalars: map[string]*graphql.Scalar{
			"String":   graphql.String,
			"Int":      graphql.Int,
			"Float":    graphql.Float,
			"Boolean":  graphql.Boolean,
			"ID":       graphql.ID,
			"Json":     newJSONScalar("Json", "Any JSON value."),
			"Any":      newJSONScalar("Any", "Any JSON value, as Json (Hypi's name for it)."),
			"UUID":     newUUIDScalar(),
			"Long":     newLongScalar(),
			"DateTime": newDateTimeScalar(),
			"Email":    newEmailInputScalar(),
		},
		enums:   map[string]*graphql.Enum{},
		objects: map[string]*graphql.Object{},
		ifaces:  map[string]*graphql.Interface{},
		inputs:  map[string]*graphql.InputObject{},
		direct:  directFields{},
	}
	for _, s := range m.Scalars {
		b.scalars[s] = newCustomScalar(s)
	}
	return b
}

// build returns the executable schema.
func (b *builder) build() (graphql.Schema, error) {
	for _, e := range b.m.Enums {
		values := graphql.EnumValueConfigMap{}
		for _, v := range e.Values {
			values[v] = &graphql.EnumValueConfig{Value: v}
		}
		b.enums[e.Name] = graphql.NewEnum(graphql.EnumConfig{Name: e.Name, Description: e.Description, Values: values})
	}
	typeValues := graphql.EnumValueConfigMap{}
	for _, t := range b.m.Types {
		typeValues[t.Name] = &graphql.EnumValueConfig{Value: t.Name}
	}
	for _, in := range b.m.Interfaces {
		typeValues[in.Name] = &graphql.EnumValueConfig{Value: in.Name, Description: "An interface: find and get read the records of its implementations; other operations take a record type."}
	}
	b.typeEnum = graphql.NewEnum(graphql.EnumConfig{
		Name:        "CoreMutationType",
		Description: "The record types of the instance, and its interfaces.",
		Values:      typeValues,
	})
	b.core = newCoreObject(b.direct)
	b.accessToken = newAccessTokenObject(b.scalars["Json"])
	for _, t := range b.m.Objects {
		b.objects[t.Name] = b.embeddedObject(t)
	}
	for _, in := range b.m.Interfaces {
		b.ifaces[in.Name] = b.interfaceType(in)
	}
	for _, t := range b.m.Types {
		b.objects[t.Name] = b.recordObject(t)
	}
	members := make([]*graphql.Object, 0, len(b.m.Types))
	for _, t := range b.m.Types {
		members = append(members, b.objects[t.Name])
	}
	b.union = graphql.NewUnion(graphql.UnionConfig{
		Name:        "CoreRootAggregate",
		Description: "Any record of the instance.",
		Types:       members,
		ResolveType: func(p graphql.ResolveTypeParams) *graphql.Object {
			if n, ok := p.Value.(*node); ok {
				return b.objects[n.rec.Type]
			}
			return nil
		},
	})
	b.pageInfo = newPageInfoObject()
	b.conn = newConnectionObject(b.direct, b.union, b.pageInfo)
	b.buildInputs()

	query := graphql.NewObject(graphql.ObjectConfig{Name: "Query", Fields: b.queryFields()})
	mutation := graphql.NewObject(graphql.ObjectConfig{Name: "Mutation", Fields: b.mutationFields()})
	subscription := b.subscriptionRoot()
	extra := []graphql.Type{b.core}
	for _, o := range b.objects {
		extra = append(extra, o)
	}
	for _, in := range b.m.Interfaces {
		extra = append(extra, b.ifaces[in.Name])
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	s, err := graphql.NewSchema(graphql.SchemaConfig{Query: query, Mutation: mutation, Subscription: subscription, Types: extra})
	if err != nil {
		return graphql.Schema{}, fmt.Errorf("gql: build schema: %w", err)
	}
	warm(&s)
	return s, nil
}

// buildMu runs one schema build (graphql.NewSchema and warm) at a time.
// Every schema's type map holds graphql-go's introspection types
// (__Type, __TypeKind, …), package globals whose lazy parts are built on
// first use; two builds warming them at once raced (go test -race, two
// releases compiled in parallel: an evicted release rebuilt while another
// is uploaded). Builds are rare; requests never take it.
var buildMu sync.Mutex

// warm resolves every lazily built part of the schema once, before it is
// shared: graphql-go builds enum lookups and field thunks on first use and
// concurrent first use races (LIBRARIES.md). Afterwards the schema is
// read-only. Call it with buildMu held.
func warm(s *graphql.Schema) {
	for _, t := range s.TypeMap() {
		switch t := t.(type) {
		case *graphql.Object:
			t.Fields()
			t.Interfaces()
		case *graphql.Interface:
			t.Fields()
		case *graphql.InputObject:
			t.Fields()
		case *graphql.Union:
			t.Types()
		case *graphql.Enum:
			for _, v := range t.Values() {
				t.Serialize(v.Value)
				t.ParseValue(v.Name)
			}
		}
	}
}

// named returns the output type for a model type name.
func (b *builder) named(name string) graphql.Output {
	if name == "Email" {
		// Email's input is the scalar EmailInput, its output this object.
		if b.email == nil {
			b.email = newEmailObject()
		}
		return b.email
	}
	if s, ok := b.scalars[name]; ok {
		return s
	}
	if e, ok := b.enums[name]; ok {
		return e
	}
	if o, ok := b.objects[name]; ok {
		return o
	}
	if in, ok := b.ifaces[name]; ok {
		return in
	}
	panic("gql: unknown output type " + name) // the model was validated
}

// namedInput returns the input type for a model type name (scalars,
// enums, declared inputs, generated record and object inputs).
func (b *builder) namedInput(name string) graphql.Input {
	if s, ok := b.scalars[name]; ok {
		return s
	}
	if e, ok := b.enums[name]; ok {
		return e
	}
	if in, ok := b.inputs[name]; ok {
		return in
	}
	if in, ok := b.inputs[name+"Input"]; ok {
		return in
	}
	panic("gql: unknown input type " + name)
}

// wrap applies list and non-null modifiers.
func wrap[T graphql.Type](base T, list, nonNull, elemNonNull bool) graphql.Type {
	var t graphql.Type = base
	if list {
		if elemNonNull {
			t = graphql.NewNonNull(t)
		}
		t = graphql.NewList(t)
	}
	if nonNull {
		t = graphql.NewNonNull(t)
	}
	return t
}
