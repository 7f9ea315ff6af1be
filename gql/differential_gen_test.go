package gql

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/graphql-go/graphql"
)

// Generated documents against the bookstore schema (testdata/e2e): random
// selections of every type the root fields reach, aliases, merged fields,
// named and inline fragments (spread once or more), @skip/@include with
// literals and variables, arguments as literals and as variables (some
// missing, some invalid), filters that fail. Each runs through both
// executors (bookstore.check).

// chooser turns fuzz input into choices, then continues with a generator
// seeded by the input once it is used up.
type chooser struct {
	b   []byte
	i   int
	rnd *rand.Rand
}

func newChooser(b []byte) *chooser {
	h := fnv.New64a()
	h.Write(b)
	return &chooser{b: b, rnd: rand.New(rand.NewPCG(h.Sum64(), uint64(len(b))))}
}

func (c *chooser) intn(n int) int {
	if n <= 1 {
		return 0
	}
	if c.i < len(c.b) {
		v := int(c.b[c.i])
		c.i++
		return v % n
	}
	return c.rnd.IntN(n)
}

func (c *chooser) chance(pct int) bool { return c.intn(100) < pct }

func pick[T any](c *chooser, options ...T) T { return options[c.intn(len(options))] }

type docGen struct {
	c       *chooser
	s       *graphql.Schema
	frags   []string
	byType  map[string][]string // fragment names by type condition
	varDefs []string
	vars    map[string]any
	n       int // names handed out
	budget  int // fields left
}

// generateRequest builds a query document and its variables from input.
func generateRequest(s *graphql.Schema, input []byte) Request {
	g := &docGen{c: newChooser(input), s: s, byType: map[string][]string{}, vars: map[string]any{}, budget: 60}
	var items []string
	for n := 1 + g.c.intn(3); n > 0; n-- {
		switch g.c.intn(6) {
		case 0:
			items = append(items, "__typename")
		case 1, 2:
			items = append(items, g.root("get"))
		default:
			items = append(items, g.root("find"))
		}
	}
	doc := "query"
	if len(g.varDefs) > 0 {
		doc += "(" + strings.Join(g.varDefs, ", ") + ")"
	}
	doc += " { " + strings.Join(items, " ") + " }"
	for _, f := range g.frags {
		doc += "\n" + f
	}
	return Request{Query: doc, Variables: g.vars}
}

func (g *docGen) name(prefix string) string {
	g.n++
	return fmt.Sprintf("%s%d", prefix, g.n)
}

// root returns a find or get with arguments and a selection.
func (g *docGen) root(field string) string {
	def := g.s.QueryType().Fields()[field]
	head := g.name("r") + ": " + field + g.args(def) + g.directives()
	return head + " " + g.selection(graphql.GetNamed(def.Type), 1)
}

// args returns a field's arguments: the required ones always, the others
// sometimes; literals or variables.
func (g *docGen) args(def *graphql.FieldDefinition) string {
	var out []string
	for _, a := range def.Args {
		_, required := a.Type.(*graphql.NonNull)
		if !required && !g.c.chance(40) {
			continue
		}
		v, ok := g.argValue(a)
		if !ok {
			continue
		}
		if g.c.chance(25) {
			name := g.name("v")
			g.varDefs = append(g.varDefs, "$"+name+": "+a.Type.String())
			switch {
			case !required && g.c.chance(15):
				// not sent: null
			case g.c.chance(4):
				g.vars[name] = "not a " + a.Type.String() // invalid for non-strings
			default:
				g.vars[name] = v
			}
			out = append(out, a.PrivateName+": $"+name)
			continue
		}
		out = append(out, a.PrivateName+": "+literal(v, a.Type))
	}
	if len(out) == 0 {
		return ""
	}
	return "(" + strings.Join(out, ", ") + ")"
}

var (
	genTypes   = []string{"Book", "Author", "Book", "Author", "URL", "Account"}
	genFilters = []string{"*", "*", "price > 5", "price <= 10 SORT price DESC", "title ^ 'Book 1'", "tags = 'poem'", "EXIST meta",
		"", "((", "nope = 1", "core.id = 'b03'", "age > 30", "name ~ 'author'", "booklist.price > 10", "* SORT age DESC", "bestbook.title = 'Book 3'"}
	genIDs = []string{"b01", "b03", "b04", "b11", "b30", "a1", "a4", "a6", "u1", "nope"}
)

// argValue chooses a value for an argument, as JSON-shaped Go data.
func (g *docGen) argValue(a *graphql.Argument) (any, bool) {
	switch a.PrivateName {
	case "type":
		return pick(g.c, genTypes...), true
	case "arcql":
		return pick(g.c, genFilters...), true
	case "first":
		return float64(pick(g.c, 1, 2, 3, 5, 25, 0, -1)), true
	case "last":
		return float64(pick(g.c, 1, 2, 4)), true
	case "after":
		return pick(g.c, "b05", "b10", "FIRST", "b02", "nope"), true
	case "before":
		return pick(g.c, "b20", "LAST", "b12"), true
	case "page":
		return float64(pick(g.c, 1, 2, 3)), true
	case "includeTrashed":
		return g.c.chance(50), true
	case "id":
		return pick(g.c, genIDs...), true
	}
	switch graphql.GetNamed(a.Type) {
	case graphql.String:
		return "x", true
	case graphql.Int:
		return 1.0, true
	case graphql.Boolean:
		return true, true
	}
	return nil, false
}

// literal writes a value as a document literal of its type.
func literal(v any, t graphql.Type) string {
	switch v := v.(type) {
	case string:
		if _, isEnum := graphql.GetNamed(t).(*graphql.Enum); isEnum {
			return v
		}
		return fmt.Sprintf("%q", v)
	case float64:
		return fmt.Sprint(int(v))
	}
	return fmt.Sprint(v)
}

// directives returns nothing mostly, else @skip or @include.
func (g *docGen) directives() string {
	if !g.c.chance(15) {
		return ""
	}
	dir := pick(g.c, "skip", "include")
	var cond string
	switch g.c.intn(3) {
	case 0:
		cond = pick(g.c, "true", "false")
	case 1:
		name := g.name("b")
		g.varDefs = append(g.varDefs, "$"+name+": Boolean!")
		g.vars[name] = g.c.chance(50)
		cond = "$" + name
	default:
		name := g.name("b")
		def := pick(g.c, "true", "false")
		g.varDefs = append(g.varDefs, "$"+name+": Boolean = "+def)
		if g.c.chance(50) {
			g.vars[name] = g.c.chance(50)
		}
		cond = "$" + name
	}
	return " @" + dir + "(if: " + cond + ")"
}

// selection returns a selection set for a composite type.
func (g *docGen) selection(t any, depth int) string {
	var items []string
	n := 1 + g.c.intn(4)
	for i := 0; i < n; i++ {
		items = append(items, g.item(t, depth, items))
	}
	return "{ " + strings.Join(items, " ") + " }"
}

// item returns one selection of a composite type.
func (g *docGen) item(t any, depth int, before []string) string {
	g.budget--
	if g.budget < 0 || depth > 5 {
		return "__typename"
	}
	switch t := t.(type) {
	case *graphql.Union:
		members := t.Types()
		switch g.c.intn(6) {
		case 0:
			return "__typename" + g.directives()
		case 1:
			return g.spread(t, depth)
		case 2:
			// Without a type condition only now and then: graphql-go's
			// validator refuses one under a non-null field.
			if g.c.chance(20) {
				return "... " + g.directives() + " { __typename }"
			}
			return "... on " + t.Name() + g.directives() + " { __typename }"
		default:
			m := members[g.c.intn(len(members))]
			if g.c.chance(60) {
				m = g.s.Type(pick(g.c, "Book", "Author")).(*graphql.Object)
			}
			if g.c.chance(30) {
				return g.spread(m, depth)
			}
			return "... on " + m.Name() + g.directives() + " " + g.selection(m, depth+1)
		}
	case *graphql.Object:
		switch r := g.c.intn(20); {
		case r == 0:
			return "__typename"
		case r == 1:
			return g.spread(t, depth)
		case r == 2:
			if g.c.chance(20) {
				return "..." + g.directives() + " " + g.selection(t, depth+1)
			}
			return "... on " + t.Name() + g.directives() + " " + g.selection(t, depth+1)
		case r == 3 && len(before) > 0:
			// The same field again: merged with the first.
			prev := before[g.c.intn(len(before))]
			if i := strings.Index(prev, " {"); i >= 0 && !strings.HasPrefix(prev, "...") {
				return prev[:i] + " " + g.selection(g.fieldType(t, prev), depth+1)
			}
			return prev
		}
		fields := t.Fields()
		names := make([]string, 0, len(fields))
		for name := range fields {
			names = append(names, name)
		}
		sort.Strings(names)
		def := fields[names[g.c.intn(len(names))]]
		head := def.Name
		args := g.args(def)
		if args != "" || g.c.chance(20) {
			head = g.name("x") + ": " + head
		}
		head += args + g.directives()
		named := graphql.GetNamed(def.Type)
		switch named.(type) {
		case *graphql.Object, *graphql.Union, *graphql.Interface:
			return head + " " + g.selection(named, depth+1)
		}
		return head
	}
	return "__typename"
}

// fieldType returns the named type of the field a previous selection
// item (`alias: name(args) …` or `name …`) selects.
func (g *docGen) fieldType(t *graphql.Object, item string) any {
	name := item
	if i := strings.Index(name, ": "); i >= 0 && i < strings.IndexAny(name+"( {", "( {") {
		name = name[i+2:]
	}
	if i := strings.IndexAny(name, "( @{"); i >= 0 {
		name = name[:i]
	}
	if def := t.Fields()[name]; def != nil {
		return graphql.GetNamed(def.Type)
	}
	return t
}

// spread returns a fragment spread on t: of an existing fragment, or of a
// new one.
func (g *docGen) spread(t interface{ Name() string }, depth int) string {
	name := t.Name()
	if prev := g.byType[name]; len(prev) > 0 && g.c.chance(40) {
		return "..." + prev[g.c.intn(len(prev))] + g.directives()
	}
	frag := g.name("F")
	body := g.selection(t, depth+1)
	g.byType[name] = append(g.byType[name], frag) // after its body: no cycles
	g.frags = append(g.frags, "fragment "+frag+" on "+name+" "+body)
	return "..." + frag + g.directives()
}

func seedInput(i int) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, uint64(i)*0x9E3779B97F4A7C15)
	return b
}

func TestDifferentialGenerated(t *testing.T) {
	t.Parallel()
	bs := newBookstoreFixture(t)
	n := 600
	if testing.Short() {
		n = 150
	}
	valid, compiled := 0, 0
	for i := 0; i < n; i++ {
		req := generateRequest(&bs.compiled.gql, seedInput(i))
		if len(bs.compiled.document(req.Query).errors) > 0 {
			continue
		}
		valid++
		diff, c := bs.check(req)
		if c {
			compiled++
		}
		if diff != "" {
			t.Errorf("document %d:\n%s\nvariables: %v\n%s", i, req.Query, req.Variables, diff)
		}
	}
	t.Logf("%d generated documents, %d valid, %d of them compiled", n, valid, compiled)
	if valid < n/2 {
		t.Errorf("only %d of %d generated documents are valid", valid, n)
	}
}

func FuzzDifferential(f *testing.F) {
	for i := 0; i < 8; i++ {
		f.Add(seedInput(i))
	}
	f.Add([]byte("find find find"))
	f.Add([]byte{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4, 3, 3, 8, 3, 2, 7, 9, 5})
	bs := newBookstoreFixture(f)
	f.Fuzz(func(t *testing.T, input []byte) {
		req := generateRequest(&bs.compiled.gql, input)
		if len(bs.compiled.document(req.Query).errors) > 0 {
			return
		}
		if diff, _ := bs.check(req); diff != "" {
			t.Fatalf("%s\nvariables: %v\n%s", req.Query, req.Variables, diff)
		}
	})
}
