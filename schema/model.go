package schema

import "github.com/vektah/gqlparser/v2/ast"

// Kind is how a field's values are kept and served.
type Kind int

const (
	// KindScalar: a built-in or custom scalar (String, Int, Float, Boolean,
	// ID, DateTime, Json, Email, or a scalar the SDL declares).
	KindScalar Kind = iota
	// KindEnum: an enum the SDL declares (or a built-in enum such as OpType).
	KindEnum
	// KindRef: a reference to a record type; stored as the record id (a list
	// reference as a list of ids) and resolved when read.
	KindRef
	// KindObject: an embedded object of a non-record object type (for
	// example GraphQLRef); stored inside the record.
	KindObject
)

// Model is a validated application schema with the built-in types merged
// in. It is immutable once built and shared by every instance of a release.
type Model struct {
	// SDL is the application's own schema text as uploaded.
	SDL string
	// Types are the record types (aggregates): the application's object
	// types and the built-in record types (Account, Webhook, URL), sorted by
	// name.
	Types []*Type
	// Objects are embedded (non-record) object types such as GraphQLRef,
	// WebhookResponse, sorted by name.
	Objects []*Type
	// Enums are the enums, built-in ones included, sorted by name.
	Enums []*Enum
	// Inputs are the input types the SDL declares plus built-in ones
	// (URLInput, WebhookPayload, …), sorted by name. The generated record
	// input types (<Type>Input) are not listed: gql derives them from Types.
	Inputs []*Input
	// Interfaces are the interfaces the SDL declares, sorted by name.
	Interfaces []*Interface
	// Scalars are the custom scalars the SDL declares (built-ins excluded).
	Scalars []string
	// Queries and Mutations are the root fields the SDL adds with
	// `type Query { … }` / `type Mutation { … }` (or extend type), in
	// declaration order; the built-in roots (find, get, …) are not listed.
	Queries   []*Field
	Mutations []*Field

	types   map[string]*Type
	objects map[string]*Type
	enums   map[string]*Enum
	inputs  map[string]*Input
	ifaces  map[string]*Interface
}

// Interface is an interface the SDL declares: fields its record types
// share. It stores nothing itself.
type Interface struct {
	Name        string
	Description string
	// Fields are the interface's fields (core, the metadata every record
	// has, not among them).
	Fields []*Field
	// Impls are the record types implementing it, sorted by name.
	Impls []string
	Pos   ast.Position

	fields map[string]*Field
}

// Interface returns the interface named name.
func (m *Model) Interface(name string) (*Interface, bool) { in, ok := m.ifaces[name]; return in, ok }

// Field returns the field of in named name.
func (in *Interface) Field(name string) (*Field, bool) { f, ok := in.fields[name]; return f, ok }

// Type is a record type or an embedded object type.
type Type struct {
	Name        string
	Description string
	Fields      []*Field
	// Indices are the field sets of @indices(sets: …).
	Indices [][]string
	// Rules are the @access rules of a record type by operation ("read",
	// "create", "update", "delete"), bound once when the release is
	// published (arcql.BindRule); nil when the type has none.
	Rules map[string]*Rule
	// Trigger is the type's @trigger, nil when it has none.
	Trigger *Trigger
	// Interfaces are the interfaces a record type implements, in
	// declaration order.
	Interfaces []string
	// Builtin types are defined by core itself: their records carry
	// publisherRealm/App/Release "core".
	Builtin bool
	Pos     ast.Position

	fields map[string]*Field
}

// Field is a field of a type, or a root field (then Args may be set).
type Field struct {
	Name        string
	Description string
	// Type is the named type at the bottom of the field's type.
	Type string
	Kind Kind
	// List is true for a list field; NonNull for `!` on the field's outer
	// type; ElemNonNull for `!` on the element of a list.
	List        bool
	NonNull     bool
	ElemNonNull bool
	// Unique is set by @unique.
	Unique bool
	// Hidden fields are write-only: never returned, filtered or sorted
	// (Account.password).
	Hidden bool
	// Rules are the validation directives of a record field, nil when it
	// has none (validation.go).
	Rules *Rules
	// Args of a root field.
	Args []*Arg
	// Fn is the @fn binding of a root field, nil when unbound.
	Fn *FnBinding
	// Trigger is a Mutation field's @trigger, nil when it has none.
	Trigger *Trigger
	// Public root fields (@public) may be called by anonymous callers of an
	// instance that allows anonymous requests.
	Public bool
	// Directives as written, for anything not modelled above.
	Directives ast.DirectiveList
	Pos        ast.Position
}

// Arg is an argument of a root field, or a field of an input type.
type Arg struct {
	Name        string
	Description string
	Type        string
	List        bool
	NonNull     bool
	ElemNonNull bool
	// Default is the default value literal, nil when there is none; it has
	// been checked against the type.
	Default *ast.Value
	// Pos is where the argument is declared (Src names the prelude for a
	// built-in input's fields).
	Pos ast.Position
}

// Trigger is a @trigger(config: {before, after}): the root fields called
// around a write (either may be nil).
type Trigger struct {
	Before, After *TriggerRef
	// Subject names what the trigger stands on, for messages.
	Subject string
	Pos     ast.Position
}

// TriggerRef names a root field: Type is Query or Mutation.
type TriggerRef struct {
	Type, Field string
}

// RootField returns the Query (opType "Query") or Mutation field name, nil
// when there is none.
func (m *Model) RootField(opType, name string) *Field {
	var roots []*Field
	switch opType {
	case "Query":
		roots = m.Queries
	case "Mutation":
		roots = m.Mutations
	}
	for _, f := range roots {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// FnBinding is the @fn(name, version, env) directive of a root field.
type FnBinding struct {
	Name    string
	Version string
	Env     []string
}

// Enum is an enum type.
type Enum struct {
	Name        string
	Description string
	Values      []string
	Builtin     bool
	Pos         ast.Position
}

// Input is an input object type.
type Input struct {
	Name        string
	Description string
	Fields      []*Arg
	Builtin     bool
	Pos         ast.Position
}

// Type returns the record type named name.
func (m *Model) Type(name string) (*Type, bool) { t, ok := m.types[name]; return t, ok }

// Object returns the embedded object type named name.
func (m *Model) Object(name string) (*Type, bool) { t, ok := m.objects[name]; return t, ok }

// Enum returns the enum named name.
func (m *Model) Enum(name string) (*Enum, bool) { e, ok := m.enums[name]; return e, ok }

// Input returns the input type named name.
func (m *Model) Input(name string) (*Input, bool) { in, ok := m.inputs[name]; return in, ok }

// Field returns the field of t named name.
func (t *Type) Field(name string) (*Field, bool) { f, ok := t.fields[name]; return f, ok }
