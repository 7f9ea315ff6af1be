package schema

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// Parse parses and validates an application's SDL against lim and returns
// its Model with the built-in types merged in. On failure the error is an
// Errors listing every problem found (a syntax error stops parsing, so it is
// reported alone).
func Parse(sdl string, lim Limits) (*Model, error) {
	return parse(sdl, builtinSDL, lim)
}

// parse is Parse with the prelude as a parameter, for tests.
func parse(sdl, prelude string, lim Limits) (*Model, error) {
	lim = lim.orDefault()
	if len(sdl) > lim.MaxBytes {
		return nil, Errors{{Message: fmt.Sprintf("the schema is %d bytes; the limit is %d", len(sdl), lim.MaxBytes)}}
	}
	doc, err := parser.ParseSchemaWithLimit(&ast.Source{Name: "schema.graphql", Input: sdl}, lim.MaxTokens)
	if err != nil {
		return nil, syntaxErrors(err, lim)
	}
	if n := len(doc.Definitions); n > lim.MaxTypes {
		return nil, Errors{{Message: fmt.Sprintf("the schema declares %d types; the limit is %d", n, lim.MaxTypes)}}
	}
	builtins, err := parser.ParseSchema(&ast.Source{Name: builtinSDLName, Input: prelude, BuiltIn: true})
	if err != nil {
		return nil, fmt.Errorf("schema: built-in types: %w", err)
	}

	b := newBuilder(lim)
	b.declarePrelude(builtins)
	b.declareUser(doc)
	m := b.build()
	m.SDL = sdl
	if !b.errs.empty() {
		return nil, b.errs.result()
	}
	return m, nil
}

// syntaxErrors converts a gqlparser error into Errors.
func syntaxErrors(err error, lim Limits) Errors {
	var list gqlerror.List
	if !errors.As(err, &list) {
		var one *gqlerror.Error
		if !errors.As(err, &one) {
			return Errors{{Message: err.Error()}}
		}
		list = gqlerror.List{one}
	}
	var es Errors
	for _, ge := range list {
		e := &Error{Message: ge.Message}
		if len(ge.Locations) > 0 {
			e.Line, e.Column = ge.Locations[0].Line, ge.Locations[0].Column
		} else if strings.Contains(ge.Message, "token limit") {
			// The only error the parser reports without a position.
			e.Message = fmt.Sprintf("the schema has more than %d tokens (the limit)", lim.MaxTokens)
		}
		es = append(es, e)
	}
	return es
}

// kind classifies a named type.
type kind int

const (
	kindScalar kind = iota
	kindEnum
	kindRecord
	kindObject
	kindInput
	kindInterface
	kindRoot // Query and Mutation
)

func (k kind) String() string {
	switch k {
	case kindScalar:
		return "a scalar"
	case kindEnum:
		return "an enum"
	case kindRecord:
		return "a record type"
	case kindObject:
		return "an object type"
	case kindInput:
		return "an input type"
	case kindInterface:
		return "an interface"
	default:
		return "a root type"
	}
}

// named is a named type while a Model is built: its definition and, for an
// application type, the extensions that add to it.
type named struct {
	name    string
	kind    kind
	builtin bool
	def     *ast.Definition // nil for GraphQL's scalars and an undeclared root
	exts    []*ast.Definition
}

// parts returns the definition and its extensions in source order.
func (n *named) parts() []*ast.Definition {
	var ps []*ast.Definition
	if n.def != nil {
		ps = append(ps, n.def)
	}
	ps = append(ps, n.exts...)
	slices.SortStableFunc(ps, func(a, b *ast.Definition) int { return comparePos(a.Position, b.Position) })
	return ps
}

// fields returns the fields of every part in source order.
func (n *named) fields() ast.FieldList {
	var fs ast.FieldList
	for _, p := range n.parts() {
		fs = append(fs, p.Fields...)
	}
	return fs
}

// pos is where the type is defined (or first extended).
func (n *named) pos() *ast.Position {
	if ps := n.parts(); len(ps) > 0 {
		return ps[0].Position
	}
	return nil
}

func comparePos(a, b *ast.Position) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	case a.Line != b.Line:
		return a.Line - b.Line
	default:
		return a.Column - b.Column
	}
}

// builder turns the prelude and the application's SDL into a Model,
// collecting every problem on the way.
type builder struct {
	lim        Limits
	errs       errorList
	named      map[string]*named
	directives map[string]*ast.DirectiveDefinition
	// refused names application definitions already reported as refused;
	// uses of them are not reported again.
	refused map[string]bool
	// access holds the @access directives met while building types; they
	// are bound once every type is known (compileRules).
	access []pendingRules
}

func newBuilder(lim Limits) *builder {
	b := &builder{
		lim:        lim,
		named:      map[string]*named{},
		directives: map[string]*ast.DirectiveDefinition{},
		refused:    map[string]bool{},
	}
	for _, s := range graphQLScalars {
		b.named[s] = &named{name: s, kind: kindScalar, builtin: true}
	}
	for _, r := range [...]string{"Query", "Mutation"} {
		b.named[r] = &named{name: r, kind: kindRoot}
	}
	return b
}

// declarePrelude registers the built-in definitions.
func (b *builder) declarePrelude(doc *ast.SchemaDocument) {
	for _, d := range doc.Directives {
		b.directives[d.Name] = d
	}
	for _, def := range doc.Definitions {
		k := kindOf(def)
		if k == kindRecord && !isBuiltinRecord(def.Name) {
			k = kindObject
		}
		b.named[def.Name] = &named{name: def.Name, kind: k, builtin: true, def: def}
	}
}

// kindOf classifies a definition: every object type is a record type
// (except the built-in embedded ones, which the caller sorts out);
// unions are refused before this is asked.
func kindOf(def *ast.Definition) kind {
	switch def.Kind {
	case ast.Interface:
		return kindInterface
	case ast.Scalar:
		return kindScalar
	case ast.Enum:
		return kindEnum
	case ast.InputObject:
		return kindInput
	default:
		return kindRecord
	}
}

// declareUser registers the application's definitions and extensions,
// refusing what is not supported, reserved or defined twice.
func (b *builder) declareUser(doc *ast.SchemaDocument) {
	for _, s := range doc.Schema {
		b.errs.at(s.Position, "schema definitions are not supported: the root types are always Query and Mutation")
	}
	for _, s := range doc.SchemaExtension {
		b.errs.at(s.Position, "schema extensions are not supported: the root types are always Query and Mutation")
	}
	for _, d := range doc.Directives {
		b.declareDirective(d)
	}
	for _, d := range doc.DirectiveExtensions {
		b.errs.at(d.Position, "directive extensions are not supported")
	}

	for _, def := range doc.Definitions {
		if !b.supported(def, "") {
			b.refuse(def.Name)
			continue
		}
		name := def.Name
		if prev, ok := b.named[name]; ok {
			switch {
			case prev.kind == kindRoot && def.Kind == ast.Object && prev.def == nil:
				prev.def = def
			case prev.kind == kindRoot && def.Kind != ast.Object:
				b.errs.at(def.Position, "%s is the name of a root type; declare it as type %s", name, name)
			case redeclarable(prev, string(def.Kind)):
			case prev.builtin:
				b.errs.at(def.Position, "%s is a built-in type", name)
			default:
				b.errs.at(def.Position, "%s is already defined at %s", name, posString(prev.def.Position))
			}
			continue
		}
		if msg := reservedTypeName(name); msg != "" {
			b.errs.at(def.Position, "%s", msg)
			b.refuse(name)
			continue
		}
		b.named[name] = &named{name: name, kind: kindOf(def), def: def}
	}
	// <T>Input is generated for every record and object type T, and <T>Aggs,
	// <T>GroupBy and <T>AggField for every record type: refuse an
	// application type of such a name once every T is known.
	for _, def := range doc.Definitions {
		if n := b.named[def.Name]; n == nil || n.def != def || n.builtin {
			continue
		}
		for _, g := range generatedSuffixes {
			t, ok := strings.CutSuffix(def.Name, g.suffix)
			if !ok {
				continue
			}
			if tn := b.named[t]; tn != nil && (tn.kind == kindRecord || ((tn.kind == kindObject || tn.kind == kindInterface) && g.suffix == "Input")) {
				b.errs.at(def.Position, "%s is reserved: it is the generated %s of %s", def.Name, g.what, t)
				delete(b.named, def.Name)
				b.refuse(def.Name)
				break
			}
		}
	}

	for _, ext := range doc.Extensions {
		if !b.supported(ext, "extend ") {
			continue
		}
		n, ok := b.named[ext.Name]
		switch {
		case !ok && b.refused[ext.Name]:
		case !ok:
			b.errs.at(ext.Position, "cannot extend %s: no such type", ext.Name)
		case n.builtin:
			b.errs.at(ext.Position, "cannot extend %s: it is a built-in type", ext.Name)
		case n.kind == kindRoot && ext.Kind != ast.Object, n.kind != kindRoot && kindOf(ext) != n.kind:
			b.errs.at(ext.Position, "cannot extend %s as %s: it is %s", ext.Name, kindWord(ext.Kind), n.kind)
		default:
			n.exts = append(n.exts, ext)
		}
	}
}

// supported refuses unions, interfaces implementing interfaces and the
// subscription root.
func (b *builder) supported(def *ast.Definition, extend string) bool {
	switch {
	case def.Kind == ast.Union:
		b.errs.at(def.Position, "%sunion %s: unions are not supported: a stored reference names one record type, or an interface its record types implement (declare an interface with the fields they share)", extend, def.Name)
	case def.Kind == ast.Object && def.Name == "Subscription":
		b.errs.at(def.Position, "%stype Subscription: subscriptions are built in (Subscription.subscribe); a schema cannot declare its own Subscription fields for now", extend)
	case def.Kind == ast.Interface && len(def.Interfaces) > 0:
		b.errs.at(def.Position, "%sinterface %s implements %s: an interface cannot implement interfaces", extend, def.Name, strings.Join(def.Interfaces, " & "))
	default:
		return true
	}
	return false
}

// refuse records that a definition of name was refused, unless a valid
// definition of that name exists (then uses of the name are fine).
func (b *builder) refuse(name string) {
	if _, ok := b.named[name]; !ok {
		b.refused[name] = true
	}
}

func kindWord(k ast.DefinitionKind) string {
	switch k {
	case ast.Scalar:
		return "a scalar"
	case ast.Enum:
		return "an enum"
	case ast.InputObject:
		return "an input"
	default:
		return "a type"
	}
}

func posString(p *ast.Position) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprintf("%d:%d", p.Line, p.Column)
}

// build assembles the Model from the registered types.
func (b *builder) build() *Model {
	m := &Model{
		types:   map[string]*Type{},
		objects: map[string]*Type{},
		enums:   map[string]*Enum{},
		inputs:  map[string]*Input{},
		ifaces:  map[string]*Interface{},
	}
	names := make([]string, 0, len(b.named))
	for name := range b.named {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		n := b.named[name]
		if n.def == nil && n.kind != kindRoot {
			continue // GraphQL's own scalars
		}
		if !n.builtin {
			b.checkFieldCount(n)
		}
		switch n.kind {
		case kindRecord, kindObject:
			t := b.buildType(n)
			if n.kind == kindRecord {
				m.Types = append(m.Types, t)
				m.types[name] = t
			} else {
				m.Objects = append(m.Objects, t)
				m.objects[name] = t
			}
		case kindEnum:
			e := b.buildEnum(n)
			m.Enums = append(m.Enums, e)
			m.enums[name] = e
		case kindInput:
			in := b.buildInput(n)
			m.Inputs = append(m.Inputs, in)
			m.inputs[name] = in
		case kindInterface:
			in := b.buildInterface(n)
			m.Interfaces = append(m.Interfaces, in)
			m.ifaces[name] = in
		case kindScalar:
			b.buildScalar(n)
			if !n.builtin {
				m.Scalars = append(m.Scalars, name)
			}
		case kindRoot:
			fs := b.buildRoot(n)
			if name == "Query" {
				m.Queries = fs
			} else {
				m.Mutations = fs
			}
		}
	}
	b.checkInputCycles()
	b.checkImplements(m)
	b.compileRules(m)
	b.checkTriggers(m)
	return m
}

// checkFieldCount applies MaxFieldsPerType.
func (b *builder) checkFieldCount(n *named) {
	count := 0
	for _, p := range n.parts() {
		count += len(p.Fields) + len(p.EnumValues)
	}
	if count > b.lim.MaxFieldsPerType {
		b.errs.at(n.pos(), "%s has %d fields; the limit is %d", n.name, count, b.lim.MaxFieldsPerType)
	}
}
