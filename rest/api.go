package rest

import (
	"runtime"
	"slices"
	"sync"
	"weak"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/gql"
	"github.com/corehq/core/schema"
)

// Roots of /fn/{root}/{fn}.
const (
	rootQuery    = "query"
	rootMutation = "mutation"
)

// typeEnum is the enum of the record type names: an argument of this type
// names an aggregate.
const typeEnum = "CoreMutationType"

// API is what the REST interface knows of one compiled schema: its model,
// its root fields with their arguments, and the output selections
// generated from its types. It is built once per schema (that is, per
// release), never changes afterwards and is safe for concurrent use.
type API struct {
	model *schema.Model
	// types are the schema's GraphQL types by name.
	types graphql.TypeMap
	// roots holds the Query and Mutation fields by root, then by name.
	roots map[string]map[string]*rootField

	openapiOnce sync.Once
	openapi     []byte
}

// rootField is a field of Query or Mutation as the rewrite uses it.
type rootField struct {
	root string // rootQuery or rootMutation
	name string
	desc string
	// args are the field's arguments, sorted by name.
	args []argument
	out  graphql.Output
	// sel is the selection of the result (empty for a scalar result); for
	// a field that has a `type` argument, the union members of its result
	// are narrowed to that type by selFor.
	sel string
	// typed: the field has a `type: CoreMutationType` argument.
	typed bool
	// token: the field answers an AccessToken (a login).
	token bool

	narrowed map[string]string // record type → selection narrowed to it
}

// argument is an argument of a root field.
type argument struct {
	name string
	desc string
	typ  graphql.Input
	// typeName is typ in GraphQL's notation ([Book!]!), spelled once:
	// graphql-go spells it with fmt each time.
	typeName string
	// required: non-null without a default, so a request must give it.
	required bool
}

// arg returns the argument named name.
func (f *rootField) arg(name string) (argument, bool) {
	i, ok := slices.BinarySearchFunc(f.args, name, func(a argument, n string) int {
		switch {
		case a.name < n:
			return -1
		case a.name > n:
			return 1
		}
		return 0
	})
	if !ok {
		return argument{}, false
	}
	return f.args[i], true
}

// selFor returns the selection of the field's result for a request naming
// typ in its `type` argument ("" when it names none).
func (f *rootField) selFor(typ string) string {
	if s, ok := f.narrowed[typ]; ok {
		return s
	}
	return f.sel
}

// NewAPI describes a compiled schema for the REST interface.
func NewAPI(s *gql.Schema) *API {
	m := s.Model()
	g := newSelector(m)
	a := &API{model: m, types: s.GraphQL().TypeMap(), roots: map[string]map[string]*rootField{}}
	for root, obj := range map[string]*graphql.Object{rootQuery: s.GraphQL().QueryType(), rootMutation: s.GraphQL().MutationType()} {
		fields := map[string]*rootField{}
		if obj != nil {
			for name, fd := range obj.Fields() {
				fields[name] = newRootField(g, root, fd)
			}
		}
		a.roots[root] = fields
	}
	return a
}

// newRootField describes one root field.
func newRootField(g *selector, root string, fd *graphql.FieldDefinition) *rootField {
	f := &rootField{root: root, name: fd.Name, desc: fd.Description, out: fd.Type, sel: g.of(fd.Type, "")}
	for _, a := range fd.Args {
		_, nonNull := a.Type.(*graphql.NonNull)
		f.args = append(f.args, argument{name: a.PrivateName, desc: a.Description(), typ: a.Type, typeName: a.Type.String(), required: nonNull && a.DefaultValue == nil})
		if named(a.Type).Name() == typeEnum && a.PrivateName == "type" {
			f.typed = true
		}
	}
	slices.SortFunc(f.args, func(x, y argument) int {
		switch {
		case x.name < y.name:
			return -1
		case x.name > y.name:
			return 1
		}
		return 0
	})
	if f.typed && hasUnion(fd.Type, map[string]bool{}) {
		f.narrowed = map[string]string{}
		for _, t := range g.model.Types {
			f.narrowed[t.Name] = g.of(fd.Type, t.Name)
		}
	}
	f.token = named(fd.Type).Name() == "AccessToken"
	return f
}

// field returns the root field root/name.
func (a *API) field(root, name string) (*rootField, bool) {
	f, ok := a.roots[root][name]
	return f, ok
}

// isType reports whether name is a record type of the schema.
func (a *API) isType(name string) bool {
	_, ok := a.model.Type(name)
	return ok
}

// apiCache keeps one API per compiled schema for as long as the schema
// lives: a release replaced and dropped takes its API with it.
type apiCache struct {
	m sync.Map // weak.Pointer[gql.Schema] → *API
}

// get returns the API of s, building it on first use.
func (c *apiCache) get(s *gql.Schema) *API {
	k := weak.Make(s)
	if v, ok := c.m.Load(k); ok {
		return v.(*API)
	}
	v, loaded := c.m.LoadOrStore(k, NewAPI(s))
	if !loaded {
		runtime.AddCleanup(s, func(k weak.Pointer[gql.Schema]) { c.m.Delete(k) }, k)
	}
	return v.(*API)
}

// named returns the named type under list and non-null wrappers.
func named(t graphql.Type) graphql.Type {
	for {
		switch w := t.(type) {
		case *graphql.NonNull:
			t = w.OfType
		case *graphql.List:
			t = w.OfType
		default:
			return t
		}
	}
}

// hasUnion reports whether a union is reachable from t through object
// fields.
func hasUnion(t graphql.Type, seen map[string]bool) bool {
	switch n := named(t).(type) {
	case *graphql.Union:
		return true
	case *graphql.Object:
		if seen[n.Name()] {
			return false
		}
		seen[n.Name()] = true
		for _, f := range n.Fields() {
			if hasUnion(f.Type, seen) {
				return true
			}
		}
	}
	return false
}
