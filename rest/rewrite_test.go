package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/parser"
	"github.com/graphql-go/graphql/language/source"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/internal/golden"
	"github.com/corehq/core/schema"
)

// testdataDir holds the golden files and the schema they are made with.
var testdataDir = filepath.Join("..", "testdata", "rest")

// testAPI builds the API of testdata/rest/schema.graphql.
func testAPI(t testing.TB) (*API, *gql.Schema) {
	t.Helper()
	sdl, err := os.ReadFile(filepath.Join(testdataDir, "schema.graphql"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := schema.Parse(string(sdl), schema.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	s, err := gql.Build(m, gql.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return NewAPI(s), s
}

// parseRequest turns a request line (method, path under /rest/v1 with its
// query string) and a body into the Request the handler would build, the
// way echo routes it.
func parseRequest(method, target, body string) (Request, error) {
	r := Request{Method: method}
	path, rawQuery, _ := strings.Cut(target, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return r, errcode.New(errcode.BadRequest, "the query string is malformed: %s", err)
	}
	r.Query = q
	var parts []string
	for _, p := range strings.Split(strings.Trim(path, "/"), "/") {
		u, err := url.PathUnescape(p)
		if err != nil {
			return r, errcode.New(errcode.BadRequest, "the path is malformed: %s", err)
		}
		parts = append(parts, u)
	}
	switch {
	case path == "/" || path == "":
		r.Route = RouteRecords
	case len(parts) == 1 && parts[0] == "login" && method == "POST":
		r.Route = RouteLogin
	case len(parts) == 3 && parts[0] == "fn":
		r.Route, r.Root, r.Fn = RouteFn, parts[1], parts[2]
	case len(parts) == 1:
		r.Route, r.Aggregate = RouteType, parts[0]
	case len(parts) == 2:
		r.Route, r.Aggregate, r.ID = RouteRecord, parts[0], parts[1]
	default:
		return r, errcode.New(errcode.NotFound, "no such path")
	}
	if method == "POST" || method == "PUT" {
		if r.Body, err = decodeObject([]byte(body)); err != nil {
			return r, err
		}
	}
	return r, nil
}

// hostile are values that would change a document if they were pasted
// into its text, or a MongoDB filter if they were taken as one.
var hostile = []string{`") { __schema { types { name } } }`, `{"$gt":""}`, `' OR core.id != '`, "$type", "}"}

type rewriteCase struct {
	name   string
	method string
	target string // path under /rest/v1, with the query string
	body   string
}

func rewriteCases() []rewriteCase {
	cases := []rewriteCase{
		// POST and PUT /: upsert.
		{"upsert, arrays per type", "POST", "/", `{"values": {"Author": [{"core": {"id": "a1"}, "name": "Sudha Murty", "age": 70}], "Book": [{"title": "Inferno"}]}}`},
		{"upsert, one object per type", "PUT", "/", `{"values": {"Book": {"core": {"id": "b1"}, "price": 7.5}}}`},
		{"upsert, nested referenced records", "POST", "/", `{"values": {"Author": [{"name": "Rabindranath Tagore", "bestbook": {"core": {"id": "b2"}}, "booklist": [{"title": "Gitanjali"}, {"core": {"id": "b2"}}]}]}}`},
		{"upsert, no body", "POST", "/", ""},
		{"upsert, an array body", "POST", "/", `[{"values": {}}]`},
		{"upsert, a duplicate key", "POST", "/", `{"values": {"Book": {"title": "a", "title": "b"}}}`},
		{"upsert, trailing data", "POST", "/", `{"values": {}} {}`},
		{"upsert, malformed JSON", "POST", "/", `{"values": {`},
		{"upsert, records without values", "POST", "/", `{"Author": [{"name": "x"}]}`},
		{"upsert, values not an object", "POST", "/", `{"values": [1]}`},
		{"upsert, an unknown type", "POST", "/", `{"values": {"Nope": []}}`},
		{"upsert, a query string", "POST", "/?first=2", `{"values": {}}`},
		{"upsert, DELETE", "DELETE", "/", ""},

		// GET /{aggregate}: find.
		{"find, no parameters", "GET", "/Author", ""},
		{"find, arcql and first", "GET", "/Author?arcql=" + url.QueryEscape("name = 'Sudha Murty'") + "&first=2", ""},
		{"find, every parameter", "GET", "/Book?arcql=price+%3E+5&first=10&after=b1&last=3&before=LAST&page=2&includeTrashed=true", ""},
		{"find, an empty arcql", "GET", "/Book?arcql=", ""},
		{"find, first not a number", "GET", "/Book?first=ten", ""},
		{"find, first too large for an Int", "GET", "/Book?first=2147483648", ""},
		{"find, first twice", "GET", "/Book?first=1&first=2", ""},
		{"find, includeTrashed not a boolean", "GET", "/Book?includeTrashed=yes", ""},
		{"find, type in the query string", "GET", "/Book?type=Author", ""},
		{"find, unknown parameters", "GET", "/Book?limit=5&sort=price&first=1", ""},
		{"find, unknown type", "GET", "/Nope", ""},
		{"find, a built-in type", "GET", "/Account?first=1", ""},

		// GET /{aggregate}/{identifier}.
		{"get by id", "GET", "/Author/a1", ""},
		{"get by id, a quote in the id", "GET", "/Book/O'Reilly%5C", ""},
		{"get by id, a slash in the id", "GET", "/Book/a%2Fb", ""},
		{"get by id, includeTrashed", "GET", "/Book/b1?includeTrashed=true", ""},
		{"get by id, first", "GET", "/Book/b1?first=1", ""},
		{"get by id, unknown type", "GET", "/Nope/b1", ""},

		// DELETE /{aggregate} and /{aggregate}/{identifier}.
		{"delete by filter", "DELETE", "/Book?arcql=price+%3C+6", ""},
		{"delete by filter, clearArrayReferences", "DELETE", "/Book?arcql=*&clearArrayReferences=true", ""},
		{"delete by filter, no arcql", "DELETE", "/Book", ""},
		{"delete by filter, a blank arcql", "DELETE", "/Book?arcql=+", ""},
		{"delete by filter, clearArrayReferences not a boolean", "DELETE", "/Book?arcql=*&clearArrayReferences=1", ""},
		{"delete by id", "DELETE", "/Book/b1", ""},
		{"delete by id, clearArrayReferences", "DELETE", "/Book/b1?clearArrayReferences=true", ""},
		{"delete by id, clearArrayReferences false", "DELETE", "/Book/b1?clearArrayReferences=false", ""},
		{"delete by id, arcql", "DELETE", "/Book/b1?arcql=*", ""},
		{"delete by id, unknown type", "DELETE", "/Nope/b1", ""},

		// /fn/{root}/{fn}: built-ins.
		{"fn find", "GET", "/fn/query/find?type=Author&arcql=" + url.QueryEscape("name = 'Sudha Murty'") + "&first=2", ""},
		{"fn find, no type", "GET", "/fn/query/find?arcql=*", ""},
		{"fn find, unknown type", "GET", "/fn/query/find?type=Nope&arcql=*", ""},
		{"fn get", "GET", "/fn/query/get?type=Book&id=b1", ""},
		{"fn find by POST", "POST", "/fn/query/find", `{"type": "Book", "arcql": "*", "first": 2}`},
		{"fn find by POST, an unknown type", "POST", "/fn/query/find", `{"type": "Nope", "arcql": "*"}`},
		{"fn find by POST, a query string", "POST", "/fn/query/find?first=2", `{"type": "Book", "arcql": "*"}`},
		{"fn find by POST, an unknown field", "POST", "/fn/query/find", `{"type": "Book", "arcql": "*", "limit": 2}`},
		{"fn upsert by POST", "POST", "/fn/mutation/upsert", `{"values": {"Author": [{"name": "Paulo Coelho"}]}}`},
		{"fn upsert by PUT", "PUT", "/fn/mutation/upsert", `{"values": {"Author": {"core": {"id": "a1"}, "age": 71}}}`},
		{"fn upsert by GET", "GET", "/fn/mutation/upsert?values=%7B%7D", ""},
		{"fn delete", "POST", "/fn/mutation/delete", `{"type": "Book", "arcql": "price < 6", "clearArrayReferences": true}`},
		{"fn link", "POST", "/fn/mutation/link", `{"from": "Author", "to": "Book", "via": "booklist", "whereFromID": "a1", "andToID": "b1"}`},
		{"fn logout, no body", "POST", "/fn/mutation/logout", ""},
		{"fn createAccount", "POST", "/fn/mutation/createAccount", `{"value": {"username": "ada", "password": {"value": "correct horse"}}}`},
		{"fn unknown function", "GET", "/fn/query/nope", ""},
		{"fn unknown root", "GET", "/fn/subscription/find", ""},
		{"fn missing argument", "GET", "/fn/query/get?type=Book", ""},

		// /fn/{root}/{fn}: the schema's own.
		{"fn search, every kind of argument", "GET", "/fn/query/search?words=wise&words=otherwise&genre=POEM&genres=POEM&genres=NOVEL" +
			"&price=" + url.QueryEscape(`{"min": 1, "max": 9.5}`) + "&limit=5&exact=false&ratio=-1.5e2&ref=b1" +
			"&extra=" + url.QueryEscape(`{"k": [1, "x", null]}`) + "&since=2026-01-02T15:04:05Z&budget=12.5&mail=ada%40example.com", ""},
		{"fn search, one word", "GET", "/fn/query/search?words=wise", ""},
		{"fn search, no words", "GET", "/fn/query/search?genre=POEM", ""},
		{"fn search, an unknown genre", "GET", "/fn/query/search?words=w&genre=EPIC", ""},
		{"fn search, price not JSON", "GET", "/fn/query/search?words=w&price=cheap", ""},
		{"fn search, price not an object", "GET", "/fn/query/search?words=w&price=%5B1%5D", ""},
		{"fn search, price with a duplicate key", "GET", "/fn/query/search?words=w&price=" + url.QueryEscape(`{"min": 1, "min": 2}`), ""},
		{"fn search, ratio not a number", "GET", "/fn/query/search?words=w&ratio=NaN", ""},
		{"fn search, ratio in hex", "GET", "/fn/query/search?words=w&ratio=0x10", ""},
		{"fn search, extra not JSON", "GET", "/fn/query/search?words=w&extra=%7Bnope", ""},
		{"fn search, invalid UTF-8", "GET", "/fn/query/search?words=%FF", ""},
		{"fn search, malformed query string", "GET", "/fn/query/search?words=%zz", ""},
		{"fn ping, no arguments", "GET", "/fn/query/ping", ""},
		{"fn ping by POST, an empty object", "POST", "/fn/query/ping", `{}`},
		{"fn verify", "POST", "/fn/mutation/verify", `{"payload": {"url": {"path": "/hook"}, "headers": {}, "body": "{}"}}`},

		// Login.
		{"login by GET", "GET", "/fn/query/login?username=ada&password=correct+horse&type=query", ""},
		{"loginByEmail by GET", "GET", "/fn/query/loginByEmail?email=ada%40example.com&password=correct+horse&type=query", ""},
		{"login by GET without type", "GET", "/fn/query/login?username=ada&password=correct+horse", ""},
		{"login by GET, type=mutation", "GET", "/fn/query/login?username=ada&password=x&type=mutation", ""},
		{"login by GET, no password", "GET", "/fn/query/login?username=ada&type=query", ""},
		{"login by POST, username", "POST", "/login", `{"username": "ada", "password": "correct horse"}`},
		{"login by POST, email", "POST", "/login", `{"email": "ada@example.com", "password": "correct horse"}`},
		{"login by POST, both", "POST", "/login", `{"username": "ada", "email": "ada@example.com", "password": "x"}`},
		{"login by POST, neither", "POST", "/login", `{"password": "x"}`},
		{"login by POST, no password", "POST", "/login", `{"username": "ada"}`},
		{"login by POST, an unknown field", "POST", "/login", `{"username": "ada", "password": "x", "remember": true}`},
		{"login by POST, no body", "POST", "/login", ""},
	}
	// Hostile values in every parameter stay values.
	for i, v := range hostile {
		e := url.QueryEscape(v)
		p := url.PathEscape(v)
		cases = append(cases,
			rewriteCase{fmt.Sprintf("hostile %d in arcql", i), "GET", "/Book?arcql=" + e, ""},
			rewriteCase{fmt.Sprintf("hostile %d in after", i), "GET", "/Book?after=" + e, ""},
			rewriteCase{fmt.Sprintf("hostile %d as the id", i), "GET", "/Book/" + p, ""},
			rewriteCase{fmt.Sprintf("hostile %d as the id of a delete", i), "DELETE", "/Book/" + p, ""},
			rewriteCase{fmt.Sprintf("hostile %d as the aggregate", i), "GET", "/" + p, ""},
			rewriteCase{fmt.Sprintf("hostile %d in fn find", i), "GET", "/fn/query/find?type=Book&arcql=" + e, ""},
			rewriteCase{fmt.Sprintf("hostile %d as fn find's type", i), "GET", "/fn/query/find?arcql=*&type=" + e, ""},
			rewriteCase{fmt.Sprintf("hostile %d as a parameter name", i), "GET", "/Book?" + e + "=1", ""},
			rewriteCase{fmt.Sprintf("hostile %d in a login", i), "GET", "/fn/query/login?type=query&username=" + e + "&password=" + e, ""},
			rewriteCase{fmt.Sprintf("hostile %d in search words", i), "GET", "/fn/query/search?words=" + e + "&ref=" + e, ""},
		)
	}
	return cases
}

// TestRewriteGolden pins REST request → GraphQL document, variables and
// answer shape (or the error) for every route, in
// testdata/rest/rewrite.golden. Every document must also be valid on the
// schema, and no request value may appear in a document's text.
func TestRewriteGolden(t *testing.T) {
	a, s := testAPI(t)
	var out strings.Builder
	out.WriteString("# REST request → GraphQL request, made by rest.Rewrite on testdata/rest/schema.graphql.\n")
	out.WriteString("# Regenerate with: go test ./rest -run RewriteGolden -update\n")
	for _, tc := range rewriteCases() {
		fmt.Fprintf(&out, "\n### %s\n%s /rest/v1%s\n", tc.name, tc.method, tc.target)
		if tc.body != "" {
			fmt.Fprintf(&out, "body: %s\n", tc.body)
		}
		p, err := rewriteTarget(a, tc.method, tc.target, tc.body)
		if err != nil {
			var ce *errcode.Error
			if !errors.As(err, &ce) {
				t.Fatalf("%s: an error without a code: %v", tc.name, err)
			}
			fmt.Fprintf(&out, "→ %d %s: %s\n", ce.Code.Status(), ce.Code, ce.Message)
			continue
		}
		checkPlan(t, s, p)
		var vars strings.Builder
		enc := json.NewEncoder(&vars)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(p.GraphQL.Variables); err != nil {
			t.Fatalf("%s: variables: %v", tc.name, err)
		}
		fmt.Fprintf(&out, "→ %s, shape %s\n%s\nvariables: %s", p.Field, shapeName(p.Shape), p.GraphQL.Query, vars.String())
		for _, v := range hostile {
			if len(v) >= 8 && strings.Contains(p.GraphQL.Query, v) { // shorter ones are common text
				t.Errorf("%s: the document holds the value %q:\n%s", tc.name, v, p.GraphQL.Query)
			}
		}
	}
	golden.Check(t, filepath.Join(testdataDir, "rewrite.golden"), out.String())
}

func rewriteTarget(a *API, method, target, body string) (Plan, error) {
	r, err := parseRequest(method, target, body)
	if err != nil {
		return Plan{}, err
	}
	return Rewrite(a, r)
}

func shapeName(s Shape) string {
	return map[Shape]string{ShapeData: "data", ShapeRecord: "record (404 when no edge)", ShapeLogin: "login (401 with an errorCode)"}[s]
}

// checkPlan fails unless a plan's document parses and validates on the
// schema, and declares exactly the variables the plan sets.
func checkPlan(t testing.TB, s *gql.Schema, p Plan) {
	t.Helper()
	doc, err := parser.Parse(parser.ParseParams{Source: source.NewSource(&source.Source{Body: []byte(p.GraphQL.Query)})})
	if err != nil {
		t.Fatalf("document does not parse: %v\n%s", err, p.GraphQL.Query)
	}
	if v := graphql.ValidateDocument(s.GraphQL(), doc, graphql.SpecifiedRules); !v.IsValid {
		t.Fatalf("document is not valid: %v\n%s", v.Errors, p.GraphQL.Query)
	}
	for name := range p.GraphQL.Variables {
		if !strings.Contains(p.GraphQL.Query, "$"+name+": ") {
			t.Fatalf("variable %s is set but not declared:\n%s", name, p.GraphQL.Query)
		}
	}
	if n := strings.Count(p.GraphQL.Query, ": $"); n != len(p.GraphQL.Variables) {
		t.Fatalf("the document passes %d variables, the plan sets %d:\n%s", n, len(p.GraphQL.Variables), p.GraphQL.Query)
	}
}

// TestRewriteDeterministic: the same kind of request gives the same
// document text whatever its values, and a different one for another
// type or another set of parameters.
func TestRewriteDeterministic(t *testing.T) {
	t.Parallel()
	a, _ := testAPI(t)
	doc := func(target string) string {
		t.Helper()
		p, err := rewriteTarget(a, "GET", target, "")
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		return p.GraphQL.Query
	}
	same := [][]string{
		{"/Book?arcql=price+%3E+5&first=2", "/Book?first=25&arcql=title+%3D+%27x%27", "/Book?arcql=" + url.QueryEscape(hostile[0]) + "&first=1"},
		{"/Book/b1", "/Book/" + url.PathEscape(hostile[0]), "/Book/O'Reilly"},
		{"/fn/query/login?username=a&password=b", "/fn/query/login?username=x&password=y&type=query"},
	}
	for _, group := range same {
		for _, target := range group[1:] {
			if doc(target) != doc(group[0]) {
				t.Errorf("%s and %s give different documents", group[0], target)
			}
		}
	}
	for _, pair := range [][2]string{{"/Book", "/Author"}, {"/Book", "/Book?first=2"}, {"/Book/b1?includeTrashed=true", "/Book/b1"}} {
		if doc(pair[0]) == doc(pair[1]) {
			t.Errorf("%s and %s give the same document", pair[0], pair[1])
		}
	}
}
