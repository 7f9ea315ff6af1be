package schema

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corehq/core/internal/golden"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const testdataDir = "../testdata/schema"

// TestParseGolden parses every testdata/schema/*.graphql and compares a dump
// of the Model with the .golden file beside it.
func TestParseGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(testdataDir, "*.graphql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no SDL in %s: %v", testdataDir, err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".graphql")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sdl, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Parse(string(sdl), DefaultLimits())
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := dump(m)
			golden.Check(t, strings.TrimSuffix(file, ".graphql")+".golden", got)
			if m.SDL != string(sdl) {
				t.Error("Model.SDL is not the uploaded text")
			}
		})
	}
}

// TestParseModel checks the Model structure of the spec's example directly.
func TestParseModel(t *testing.T) {
	t.Parallel()
	sdl, err := os.ReadFile(filepath.Join(testdataDir, "bookstore.graphql"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(string(sdl), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	opts := cmp.Options{
		cmpopts.IgnoreFields(Field{}, "Pos", "Directives"),
		cmpopts.IgnoreFields(Type{}, "Pos", "Description"),
		cmpopts.IgnoreFields(Arg{}, "Pos"),
		cmpopts.IgnoreUnexported(Type{}),
	}
	author, ok := m.Type("Author")
	if !ok {
		t.Fatal("no record type Author")
	}
	wantAuthor := &Type{Name: "Author", Fields: []*Field{
		{Name: "name", Type: "String", Kind: KindScalar},
		{Name: "age", Type: "Int", Kind: KindScalar},
		{Name: "bestbook", Type: "Book", Kind: KindRef},
		{Name: "booklist", Type: "Book", Kind: KindRef, List: true, ElemNonNull: true},
	}}
	if diff := cmp.Diff(wantAuthor, author, opts); diff != "" {
		t.Errorf("Author (-want +got):\n%s", diff)
	}
	book, _ := m.Type("Book")
	if diff := cmp.Diff([][]string{{"price"}}, book.Indices); diff != "" {
		t.Errorf("Book indices (-want +got):\n%s", diff)
	}
	wantMutations := []*Field{{
		Name: "verify", Type: "WebhookResponse", Kind: KindObject,
		Args: []*Arg{{Name: "payload", Type: "WebhookPayload"}},
		Fn:   &FnBinding{Name: "verify", Version: "v1", Env: []string{"SECRET"}},
	}}
	if diff := cmp.Diff(wantMutations, m.Mutations, opts); diff != "" {
		t.Errorf("Mutations (-want +got):\n%s", diff)
	}
	if len(m.Queries) != 0 {
		t.Errorf("Queries = %v, want none", m.Queries)
	}
	var names []string
	for _, t := range m.Types {
		names = append(names, t.Name)
	}
	if diff := cmp.Diff([]string{"AccessRight", "Account", "Author", "Book", "EmailVerification", "EventHook", "File", "PasswordReminder", "ScheduledFunction", "URL", "Webhook"}, names); diff != "" {
		t.Errorf("record types (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		sdl  string
		want Errors
	}{
		{"syntax error", "type Book {\n  title:\n}",
			Errors{{3, 1, "Expected Name, found }"}}},
		{"unknown field type", "type Book { title: Strin }",
			Errors{{1, 20, "field Book.title: unknown type Strin"}}},
		{"unknown argument type", "type Query { f(x: Foo): Int }",
			Errors{{1, 19, "argument Query.f(x): unknown type Foo"}}},
		{"unknown input field type", "input I { x: Foo }",
			Errors{{1, 14, "input field I.x: unknown type Foo"}}},
		{"list of lists", "type Book { m: [[Int]] }",
			Errors{{1, 13, "field Book.m: lists of lists are not supported"}}},
		{"reserved prefix Core", "type CoreBook { a: Int }",
			Errors{{1, 6, "CoreBook: type names starting with Core are reserved"}}},
		{"reserved prefix __", "enum __E { A }",
			Errors{{1, 6, "__E: names starting with __ are reserved"}}},
		{"built-in type name", "type Account { a: Int }",
			Errors{{1, 6, "Account is a built-in type"}}},
		{"GraphQL scalar name", "scalar String",
			Errors{{1, 8, "String is a built-in type"}}},
		{"generated AccessToken", "type AccessToken { a: Int }",
			Errors{{1, 6, "AccessToken is reserved: it is a generated type"}}},
		{"generated PageInfo", "input PageInfo { a: Int }",
			Errors{{1, 7, "PageInfo is reserved: it is a generated type"}}},
		{"generated record input", "type Book { a: Int }\ninput BookInput { a: Int }",
			Errors{{2, 7, "BookInput is reserved: it is the generated input type of Book"}}},
		{"generated aggregation type", "type Pair { a: Int }\nenum TimeUnit { A }",
			Errors{{1, 6, "Pair is reserved: it is a generated type"}, {2, 6, "TimeUnit is reserved: it is a generated type"}}},
		{"generated record aggregates", "type Book { a: Int }\ntype BookAggs { a: Int }\ninput BookGroupBy { a: Int }\nenum BookAggField { A }",
			Errors{{2, 6, "BookAggs is reserved: it is the generated aggregates type of Book"},
				{3, 7, "BookGroupBy is reserved: it is the generated group-by input type of Book"},
				{4, 6, "BookAggField is reserved: it is the generated aggregated-field enum of Book"}}},
		{"generated built-in input", "input AccountInput { a: Int }",
			Errors{{1, 7, "AccountInput is reserved: it is the generated input type of Account"}}},
		{"generated input named", "type Book { a: Int }\ntype Mutation { add(b: BookInput): Book }",
			Errors{{2, 24, "argument Mutation.add(b): BookInput is generated by core and cannot be named in the schema; declare an input type"}}},
		{"root name as enum", "enum Query { A }",
			Errors{{1, 6, "Query is the name of a root type; declare it as type Query"}}},
		{"field named core", "type Book { core: String }",
			Errors{{1, 13, "field Book.core: core is reserved for the record metadata; a type may declare it only as core: Core"}}},
		{"core declared as a list of Core", "type Book { core: [Core] }",
			Errors{{1, 13, "field Book.core: core is reserved for the record metadata; a type may declare it only as core: Core"},
				{1, 20, "field Book.core: unknown type Core"}}},
		{"field starting with __", "type Book { __x: String }",
			Errors{{1, 13, "field Book.__x: names starting with __ are reserved"}}},
		{"argument starting with __", "type Query { f(__a: Int): Int }",
			Errors{{1, 16, "argument Query.f(__a): names starting with __ are reserved"}}},
		{"record field arguments", "type Book { title(lang: String): String }",
			Errors{{1, 19, "field Book.title: arguments are allowed only on Query and Mutation fields"}}},
		{"record field of input type", "input I { a: Int }\ntype Book { i: I }",
			Errors{{2, 16, "field Book.i: I is an input type; a field's type must be a scalar, enum, record or object type"}}},
		{"record field of root type", "type Book { q: Query }",
			Errors{{1, 16, "field Book.q: the root type Query cannot be a field's type"}}},
		{"indices names a missing field", "type Book @indices(sets: [[\"price\", \"cost\"]]) { price: Float }",
			Errors{{1, 38, `type Book: @indices names "cost", which is not a field of Book`}}},
		{"indices on embedded object", "type Hook @indices(sets: [[\"q\"]]) { q: GraphQLRef }",
			Errors{{1, 29, "type Hook: @indices: q is an embedded object and cannot be indexed"}}},
		{"indices two lists", "type Book @indices(sets: [[\"a\", \"b\"]]) { a: [Int] b: [String] }",
			Errors{{1, 27, "type Book: @indices: an index may hold at most one list field, not a and b"}}},
		{"indices empty set", "type Book @indices(sets: [[]]) { a: Int }",
			Errors{{1, 27, "type Book: @indices: an index needs at least one field"}}},
		{"indices field twice", "type Book @indices(sets: [[\"a\", \"a\"]]) { a: Int }",
			Errors{{1, 34, "type Book: @indices: a appears twice in one index"}}},
		{"indices set twice", "type Book @indices(sets: [[\"a\"], \"a\"]) { a: Int }",
			Errors{{1, 35, "type Book: @indices: the index [a] is declared twice"}}},
		{"indices without sets", "type Book @indices { a: Int }",
			Errors{{1, 12, "type Book: @indices needs the argument sets"}}},
		{"indices not a string", "type Book @indices(sets: [[1]]) { a: Int }",
			Errors{{1, 26, "type Book: @indices argument sets: item 0: item 0: expected String!, found 1"}}},
		{"indices on a root", "type Query @indices(sets: [[\"a\"]]) { a: Int }",
			Errors{{1, 13, "type Query: @indices is allowed only on record types"}}},
		{"unique on list of references", "type Author { books: [Book] @unique }\ntype Book { a: Int }",
			Errors{{1, 30, "field Author.books: @unique is not allowed on a list of references"}}},
		{"unique on embedded object", "type Hook { q: GraphQLRef @unique }",
			Errors{{1, 28, "field Hook.q: @unique is not allowed on an embedded object"}}},
		{"unique on Json", "type Doc { body: Json @unique }",
			Errors{{1, 24, "field Doc.body: @unique is not allowed on a Json field"}}},
		{"unique twice", "type Doc { a: Int @unique @unique }",
			Errors{{1, 28, "field Doc.a: @unique may appear only once"}}},
		{"unique with an argument", "type Doc { a: Int @unique(on: true) }",
			Errors{{1, 27, "field Doc.a: @unique has no argument on"}}},
		{"unique on a root field", "type Query { a: Int @unique }",
			Errors{{1, 22, "field Query.a: @unique is allowed only on fields of record types"}}},
		{"fn without version", "type Query { f: Int @fn(name: \"f\") }",
			Errors{{1, 22, "field Query.f: @fn needs the argument version"}}},
		{"fn without arguments", "type Query { f: Int @fn }",
			Errors{{1, 22, "field Query.f: @fn needs the argument name"}, {1, 22, "field Query.f: @fn needs the argument version"}}},
		{"fn name not a string", "type Query { f: Int @fn(name: 1, version: \"v1\") }",
			Errors{{1, 31, "field Query.f: @fn argument name: expected String!, found 1"}}},
		{"fn name with a slash", "type Query { f: Int @fn(name: \"../f\", version: \"v1\") }",
			Errors{{1, 32, `field Query.f: @fn name "../f": use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit`}}},
		{"fn empty version", "type Query { f: Int @fn(name: \"f\", version: \"\") }",
			Errors{{1, 46, `field Query.f: @fn version "": use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit`}}},
		{"fn name longer than a function can be published under", "type Query { f: Int @fn(name: \"fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff\", version: \"v1\") }",
			Errors{{1, 32, `field Query.f: @fn name "fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff": use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit`}}},
		{"fn empty env name", "type Query { f: Int @fn(name: \"f\", version: \"v1\", env: [\"A\", \"\"]) }",
			Errors{{1, 63, "field Query.f: @fn env: a name must not be empty"}}},
		{"fn on a record field", "type Book { f: Int @fn(name: \"f\", version: \"v1\") }",
			Errors{{1, 21, "field Book.f: @fn is allowed only on Query and Mutation fields"}}},
		{"unknown directive", "type Book @cached { a: Int }",
			Errors{{1, 12, "type Book: unknown directive @cached"}}},
		{"directive on an input extension", "input I { a: Int }\nextend input I @deprecated(reason: $r)",
			Errors{{2, 17, "input I: @deprecated is allowed only on fields"}}},
		{"built-in root field in Mutation", "type Mutation { upsert(x: Int): Int }",
			Errors{{1, 17, "field Mutation.upsert: upsert is a built-in root field"}}},
		{"aggregate is a built-in root field", "type Query { aggregate: Int }",
			Errors{{1, 14, "field Query.aggregate: aggregate is a built-in root field"}}},
		{"built-in root field in Query", "extend type Query { logout: Boolean }",
			Errors{{1, 21, "field Query.logout: logout is a built-in root field"}}},
		{"root field of input type", "input I { a: Int }\ntype Query { f: I }",
			Errors{{2, 17, "field Query.f: I is an input type; a field's type must be a scalar, enum, record or object type"}}},
		{"root argument of record type", "type Book { a: Int }\ntype Query { f(b: Book): Int }",
			Errors{{2, 19, "argument Query.f(b): Book is an output type; an argument's type must be a scalar, enum or input type"}}},
		{"root argument of object type", "type Query { f(r: GraphQLRef): Int }",
			Errors{{1, 19, "argument Query.f(r): GraphQLRef is an output type; an argument's type must be a scalar, enum or input type"}}},
		{"argument given twice", "type Query { f(a: Int, a: Int): Int }",
			Errors{{1, 24, "argument Query.f(a) is given twice"}}},
		{"default of the wrong type", "type Query { f(n: Int = \"ten\"): Int }",
			Errors{{1, 26, `argument Query.f(n): default value: expected Int, found "ten"`}}},
		{"default not an enum value", "enum E { A B }\ninput I { e: E = C }",
			Errors{{2, 18, "input field I.e: default value: expected E, found C"}}},
		{"default missing a required field", "input P { a: Int! }\ninput I { p: P = {} }",
			Errors{{2, 18, "input field I.p: default value: P needs the field a"}}},
		{"default DateTime not ISO-8601", "input I { at: DateTime = \"yesterday\" }",
			Errors{{1, 27, `input field I.at: default value: expected DateTime, found "yesterday"`}}},
		{"input field of record type", "type Book { a: Int }\ninput I { b: Book }",
			Errors{{2, 14, "input field I.b: Book is an output type; an input field's type must be a scalar, enum or input type"}}},
		{"input cycle", "input A { b: B! }\ninput B { a: A! }",
			Errors{{1, 7, "input A can never be given: its required fields form the cycle A.b → B.a → A"}}},
		{"input self cycle", "input A { x: Int next: A! }",
			Errors{{1, 7, "input A can never be given: its required fields form the cycle A.next → A"}}},
		{"input field given twice", "input I { a: Int a: String }",
			Errors{{1, 18, "input field I.a is already defined at 1:11"}}},
		{"subscription", "type Subscription { a: Int }",
			Errors{{1, 6, "type Subscription: subscriptions are built in (Subscription.subscribe); a schema cannot declare its own Subscription fields for now"}}},
		{"implements unknown", "type Book implements Node { id: ID }",
			Errors{{1, 6, "type Book implements Node: unknown interface Node"}}},
		{"implements a record type", "type Node { id: ID }\ntype Book implements Node { id: ID }",
			Errors{{2, 6, "type Book implements Node: Node is a record type, not an interface"}}},
		{"implements without the field", "interface Item { title: String! }\ntype Book implements Item { name: String }",
			Errors{{2, 6, "type Book implements Item but has no field title (String!)"}}},
		{"implements with another type", "interface Item { title: String! }\ntype Book implements Item {\n  title: String\n}",
			Errors{{3, 3, "field Book.title is String; the interface Item declares it String!"}}},
		{"implements with another list", "interface Item { tags: [String!] }\ntype Book implements Item {\n  tags: [String]\n}",
			Errors{{3, 3, "field Book.tags is [String]; the interface Item declares it [String!]"}}},
		{"interface implementing", "interface A { a: Int }\ninterface B implements A { a: Int }",
			Errors{{2, 11, "interface B implements A: an interface cannot implement interfaces"}}},
		{"interface field directive", "interface A { a: Int @unique }",
			Errors{{1, 23, "field A.a: directives belong on the fields of the implementing types, not on an interface's"}}},
		{"root field typed by an interface", "interface A { a: Int }\ntype Query { x: A }",
			Errors{{2, 17, "field Query.x: a Query or Mutation field cannot be typed by the interface A: a function's answer names no implementing type"}}},
		{"interface input name", "interface A { a: Int }\ninput AInput { a: Int }",
			Errors{{2, 7, "AInput is reserved: it is the generated input type of A"}}},
		{"union", "type A { a: Int }\ntype B { b: Int }\nunion AB = A | B",
			Errors{{3, 7, "union AB: unions are not supported: a stored reference names one record type, or an interface its record types implement (declare an interface with the fields they share)"}}},
		{"schema definition", "schema { query: Q }\ntype Q { a: Int }",
			Errors{{1, 8, "schema definitions are not supported: the root types are always Query and Mutation"}}},
		{"custom directive declaration", "directive @cached on OBJECT",
			Errors{{1, 12, "directive @cached: custom directives are not supported"}}},
		{"built-in directive declared differently", "directive @unique(scope: String) on FIELD_DEFINITION",
			Errors{{1, 12, "directive @unique is built in: declare it exactly as `directive @unique on FIELD_DEFINITION` or leave it out"}}},
		{"duplicate type", "type Book { a: Int }\n\ntype Book { b: Int }",
			Errors{{3, 6, "Book is already defined at 1:6"}}},
		{"duplicate across kinds", "type Book { a: Int }\nenum Book { A }",
			Errors{{2, 6, "Book is already defined at 1:6"}}},
		{"duplicate Query", "type Query { a: Int }\ntype Query { b: Int }",
			Errors{{2, 6, "Query is already defined at 1:6"}}},
		{"duplicate field", "type Book { a: Int a: String }",
			Errors{{1, 20, "field Book.a is already defined at 1:13"}}},
		{"duplicate root field across an extension", "type Query { a: Int }\nextend type Query { a: Int }",
			Errors{{2, 21, "field Query.a is already defined at 1:14"}}},
		{"duplicate enum value", "enum E { A A }",
			Errors{{1, 12, "enum value E.A is already defined"}}},
		{"enum value true", "enum E { A true }",
			Errors{{1, 12, "enum value E.true: true, false and null cannot be enum values"}}},
		{"extend unknown type", "extend type Book { a: Int }",
			Errors{{1, 13, "cannot extend Book: no such type"}}},
		{"extend built-in type", "extend type Account { phone: String }",
			Errors{{1, 13, "cannot extend Account: it is a built-in type"}}},
		{"extend as another kind", "enum E { A }\nextend input E { a: Int }",
			Errors{{2, 14, "cannot extend E as an input: it is an enum"}}},
		{"refused type not reported again", "type CoreX { a: Int }\ntype Book { x: CoreX }",
			Errors{{1, 6, "CoreX: type names starting with Core are reserved"}}},
		{"several problems in source order", "type Book {\n  a: Strin\n  core: Int\n}\ntype Query { find: Int }",
			Errors{{2, 6, "field Book.a: unknown type Strin"}, {3, 3, "field Book.core: core is reserved for the record metadata; a type may declare it only as core: Core"}, {5, 14, "field Query.find: find is a built-in root field"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := Parse(tt.sdl, DefaultLimits())
			if m != nil {
				t.Errorf("Parse returned a Model with error %v", err)
			}
			var got Errors
			if !errors.As(err, &got) {
				t.Fatalf("Parse error = %v (%T), want Errors", err, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) errors (-want +got):\n%s", tt.sdl, diff)
			}
		})
	}
}

func TestParseLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		sdl  string
		lim  Limits
		want Errors
	}{
		{"1 MB", oneMegabyteSDL(), DefaultLimits(),
			Errors{{0, 0, "the schema is 1048576 bytes; the limit is 262144"}}},
		{"10,000 object types", manyTypesSDL(10_000), DefaultLimits(),
			Errors{{0, 0, "the schema has more than 50000 tokens (the limit)"}}},
		{"10,000 scalars", manyScalarsSDL(10_000), DefaultLimits(),
			Errors{{0, 0, "the schema declares 10000 types; the limit is 500"}}},
		{"bytes", "type Book { title: String }", Limits{MaxBytes: 10},
			Errors{{0, 0, "the schema is 27 bytes; the limit is 10"}}},
		{"tokens", "type Book { title: String }", Limits{MaxTokens: 5},
			Errors{{0, 0, "the schema has more than 5 tokens (the limit)"}}},
		{"types", "type A { a: Int }\ntype B { b: Int }\ntype C { c: Int }", Limits{MaxTypes: 2},
			Errors{{0, 0, "the schema declares 3 types; the limit is 2"}}},
		{"fields", "type Book { a: Int }\nextend type Book { b: Int c: Int }", Limits{MaxFieldsPerType: 2},
			Errors{{1, 6, "Book has 3 fields; the limit is 2"}}},
		{"enum values", "enum E { A B C }", Limits{MaxFieldsPerType: 2},
			Errors{{1, 6, "E has 3 fields; the limit is 2"}}},
		{"root fields", "type Query { a: Int b: Int c: Int }", Limits{MaxFieldsPerType: 2},
			Errors{{1, 6, "Query has 3 fields; the limit is 2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.sdl, tt.lim)
			var got Errors
			if !errors.As(err, &got) {
				t.Fatalf("Parse error = %v, want Errors", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrorCap(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 150 {
		fmt.Fprintf(&b, "type T%d { a: Unknown }\n", i)
	}
	_, err := Parse(b.String(), DefaultLimits())
	var got Errors
	if !errors.As(err, &got) {
		t.Fatalf("Parse error = %v, want Errors", err)
	}
	if len(got) != maxErrors+1 {
		t.Fatalf("got %d errors, want %d", len(got), maxErrors+1)
	}
	if diff := cmp.Diff(&Error{Message: "50 more problems not listed"}, got[maxErrors]); diff != "" {
		t.Errorf("last error (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&Error{Line: 1, Column: 14, Message: "field T0.a: unknown type Unknown"}, got[0]); diff != "" {
		t.Errorf("first error (-want +got):\n%s", diff)
	}
}

// TestParseLimitsZero shows that a zero limit means the default.
func TestParseLimitsZero(t *testing.T) {
	t.Parallel()
	if _, err := Parse(oneMegabyteSDL(), Limits{}); err == nil {
		t.Fatal("Parse with Limits{} accepted 1 MB")
	}
	if _, err := Parse("type Book { a: Int }", Limits{}); err != nil {
		t.Fatal(err)
	}
}

func oneMegabyteSDL() string {
	line := "type Book { title: String }\n" // 28 bytes
	s := strings.Repeat(line, (1<<20)/len(line)+1)
	return s[:1<<20]
}

func manyTypesSDL(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "type T%d { a: Int }\n", i)
	}
	return b.String()
}

func manyScalarsSDL(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "scalar S%d\n", i)
	}
	return b.String()
}

// BenchmarkParseRefused measures how fast oversized uploads are refused.
func BenchmarkParseRefused(b *testing.B) {
	for _, bc := range []struct {
		name string
		sdl  string
	}{
		{"1MB", oneMegabyteSDL()},
		{"10000types", manyTypesSDL(10_000)},
		{"10000scalars", manyScalarsSDL(10_000)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(bc.sdl, DefaultLimits()); err == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	sdl, err := os.ReadFile(filepath.Join(testdataDir, "features.graphql"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(string(sdl), DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
}

func TestErrorsFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"one", Errors{{3, 7, "field Book.a: unknown type X"}}, "3:7: field Book.a: unknown type X"},
		{"several", Errors{{0, 0, "the schema is 2 bytes; the limit is 1"}, {1, 2, "a"}, {10, 1, "b"}},
			"the schema is 2 bytes; the limit is 1\n1:2: a\n10:1: b"},
		{"wrapped", fmt.Errorf("release v1: %w", Errors{{1, 1, "x"}}), "release v1: 1:1: x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			var es Errors
			if !errors.As(tt.err, &es) {
				t.Error("errors.As(Errors) = false")
			}
		})
	}
}

// TestDeclaredMeta: a record type may declare its metadata as core: Core
// (Hypi's schemas declare hypi: Hypi); the Model is the one without it.
func TestDeclaredMeta(t *testing.T) {
	t.Parallel()
	for _, sdl := range []string{"type Book { core: Core\n title: String }", "type Book { title: String\n core: Core! }"} {
		m, err := Parse(sdl, DefaultLimits())
		if err != nil {
			t.Fatalf("%q: %v", sdl, err)
		}
		book, _ := m.Type("Book")
		if len(book.Fields) != 1 || book.Fields[0].Name != "title" {
			t.Errorf("%q: Book's fields = %v, want title only", sdl, book.Fields)
		}
		if _, ok := book.Field("core"); ok {
			t.Errorf("%q: core is a stored field", sdl)
		}
	}
}

// TestHypiScalars: Any and UUID are built in; a schema written before
// they were may declare them itself, meaning the built-ins; Any is a Json
// (no @unique) and UUID a validated string.
func TestHypiScalars(t *testing.T) {
	t.Parallel()
	m, err := Parse("scalar UUID\nscalar Any\ntype Tag { ref: UUID @unique\n data: Any}", DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Scalars) != 0 {
		t.Errorf("Scalars = %v, want none (the declarations mean the built-ins)", m.Scalars)
	}
	_, err = Parse("type Tag { data: Any @unique }", DefaultLimits())
	if err == nil || !strings.Contains(err.Error(), "@unique is not allowed on an Any field") {
		t.Errorf("@unique on Any: %v", err)
	}
	for s, want := range map[string]bool{
		"123e4567-e89b-12d3-a456-426614174000": true, "123E4567-E89B-12D3-A456-426614174000": true,
		"123e4567e89b12d3a456426614174000": false, "123e4567-e89b-12d3-a456-42661417400g": false,
		"{123e4567-e89b-12d3-a456-426614174000}": false, "": false,
	} {
		if ValidUUID(s) != want {
			t.Errorf("ValidUUID(%q) = %v, want %v", s, !want, want)
		}
	}
}
