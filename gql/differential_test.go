package gql

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/graphql-go/graphql"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/internal/testfiles"
	"github.com/corehq/core/keyring"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store/bolt"
	"github.com/corehq/core/tenant"
)

// Differential tests: the compiled executor must answer exactly what
// graphql.Execute answers, errors included.
//
//   - TestDifferentialE2E runs this package's whole test suite again with
//     the differential hook on: every request of every end-to-end test runs
//     on the compiled executor with its resolver calls recorded, then on
//     graphql.Execute with those calls replayed (so a mutation or a login
//     runs once), and the two answers must be the same.
//   - TestDifferentialDocuments runs a table of documents, and
//     TestDifferentialGenerated and FuzzDifferential generated ones,
//     against the spec's bookstore schema on a seeded store, through a
//     schema on each executor.

// envDifferential names the file the differential run of the suite logs
// each compared request to; set, it turns the hook on.
const envDifferential = "CORE_GQL_DIFFERENTIAL_LOG"

func init() {
	path := os.Getenv(envDifferential)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		panic(err)
	}
	d := &diffLog{f: f}
	differential = d.compare
	wrapResolvers = wrapForReplay
}

// diffEntry is one compared request in the differential log.
type diffEntry struct {
	Query    string   `json:"query"`
	Compiled bool     `json:"compiled"`
	Problems []string `json:"problems,omitempty"`
}

type diffLog struct {
	mu sync.Mutex
	f  *os.File
}

func (d *diffLog) write(e diffEntry) {
	b, _ := json.Marshal(e)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.f.Write(append(b, '\n'))
}

// compare is the differential hook: it runs the compiled executor while
// recording resolver calls, then graphql.Execute replaying them.
func (d *diffLog) compare(ctx context.Context, s *Schema, req Request, compiled, reference func(context.Context) *Result) *Result {
	rec := &recording{calls: map[string]*recordedCall{}}
	got := compiled(context.WithValue(ctx, replayKey{}, rec))
	if !got.compiled {
		// It ran on graphql.Execute: nothing to compare (and introspection
		// answers in map order).
		d.write(diffEntry{Query: req.Query})
		return got
	}
	want := reference(context.WithValue(ctx, replayKey{}, &replay{rec: rec}))
	problems := rec.problems
	if diff := diffResults(want, got); diff != "" {
		problems = append(problems, diff)
	} else if data := got.DataJSON(); data != nil {
		if err := checkOrder(&s.gql, s.document(req.Query).ast, req.OperationName, req.Variables, data); err != nil {
			problems = append(problems, "key order: "+err.Error())
		}
	}
	if len(problems) == 0 && !(want.Data == nil && len(want.Errors) > 0) {
		for key, c := range rec.calls {
			if !c.replayed {
				problems = append(problems, "graphql.Execute did not call the resolver at "+key)
			}
		}
	}
	d.write(diffEntry{Query: req.Query, Compiled: got.compiled, Problems: problems})
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "DIFFERENTIAL MISMATCH for %s:\n%s\n", req.Query, strings.Join(problems, "\n"))
		return &Result{Status: 500, Errors: documentErrors([]error{fmt.Errorf("differential mismatch: %s", strings.Join(problems, "; "))}).Errors}
	}
	return got
}

type replayKey struct{}

// recording holds the resolver calls of a compiled run, by response path.
type recording struct {
	mu       sync.Mutex
	calls    map[string]*recordedCall
	problems []string
}

type recordedCall struct {
	p        graphql.ResolveParams
	v        any
	err      error
	panicked any // what the resolver panicked with; the replay panics with it too
	replayed bool
}

type replay struct{ rec *recording }

// wrapForReplay wraps every resolver of a schema to record (compiled run)
// or replay (reference run) its calls.
func wrapForReplay(s *graphql.Schema, direct directFields) {
	for name, t := range s.TypeMap() {
		o, ok := t.(*graphql.Object)
		if !ok || strings.HasPrefix(name, "__") {
			continue
		}
		for _, def := range o.Fields() {
			if direct.lookup(name, def.Name) != nil {
				continue
			}
			orig := def.Resolve
			if orig == nil {
				orig = graphql.DefaultResolveFn
			}
			def.Resolve = func(p graphql.ResolveParams) (any, error) {
				key := fmt.Sprint(p.Info.Path.AsArray())
				switch m := p.Context.Value(replayKey{}).(type) {
				case *recording:
					record := func(c *recordedCall) {
						m.mu.Lock()
						defer m.mu.Unlock()
						if _, dup := m.calls[key]; dup {
							m.problems = append(m.problems, "the compiled executor called the resolver at "+key+" twice")
						}
						m.calls[key] = c
					}
					returned := false
					defer func() {
						if !returned {
							// A resolver that panics is compared too: the
							// replay panics alike.
							r := recover()
							record(&recordedCall{p: p, panicked: r})
							panic(r)
						}
					}()
					v, err := orig(p)
					returned = true
					record(&recordedCall{p: p, v: v, err: err})
					return v, err
				case *replay:
					m.rec.mu.Lock()
					defer m.rec.mu.Unlock()
					c, ok := m.rec.calls[key]
					if !ok {
						m.rec.problems = append(m.rec.problems, "the compiled executor did not call the resolver at "+key)
						return nil, errors.New("differential: not recorded")
					}
					c.replayed = true
					if diff := diffParams(p, c.p); diff != "" {
						m.rec.problems = append(m.rec.problems, "resolver at "+key+" got other params (-reference +compiled):\n"+diff)
					}
					if c.panicked != nil {
						panic(c.panicked)
					}
					return c.v, c.err
				}
				return orig(p)
			}
		}
	}
}

// diffParams compares what the two executors hand a resolver.
func diffParams(want, got graphql.ResolveParams) string {
	var out []string
	if d := cmp.Diff(want.Args, got.Args); d != "" {
		out = append(out, "args: "+d)
	}
	if d := cmp.Diff(want.Info.VariableValues, got.Info.VariableValues); d != "" {
		out = append(out, "variables: "+d)
	}
	wi, gi := want.Info, got.Info
	if wi.FieldName != gi.FieldName || wi.ParentType != gi.ParentType || wi.ReturnType != gi.ReturnType || wi.Operation != gi.Operation {
		out = append(out, fmt.Sprintf("info: %s %v %v vs %s %v %v", wi.FieldName, wi.ParentType, wi.ReturnType, gi.FieldName, gi.ParentType, gi.ReturnType))
	}
	if fmt.Sprint(wi.FieldASTs) != fmt.Sprint(gi.FieldASTs) || len(wi.Fragments) != len(gi.Fragments) {
		out = append(out, "field nodes or fragments differ")
	}
	switch wt, gt := reflect.TypeOf(want.Source), reflect.TypeOf(got.Source); {
	case wt != gt:
		out = append(out, fmt.Sprintf("source %T vs %T", want.Source, got.Source))
	case wt != nil && wt.Comparable() && want.Source != got.Source:
		out = append(out, fmt.Sprintf("source %v vs %v", want.Source, got.Source))
	}
	return strings.Join(out, "\n")
}

// diffResults compares two answers as a client sees them: status and
// body, errors in any order (graphql.Execute runs a query's fields in map
// order).
func diffResults(want, got *Result) string {
	if want.Status != got.Status || want.RetryAfter != got.RetryAfter {
		return fmt.Sprintf("status %d (retry %d), compiled %d (retry %d)", want.Status, want.RetryAfter, got.Status, got.RetryAfter)
	}
	norm := func(r *Result) (any, error) {
		b, err := r.Body()
		if err != nil {
			return nil, err
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("%v: %s", err, b)
		}
		if errs, ok := v["errors"].([]any); ok {
			sort.Slice(errs, func(i, j int) bool { return fmt.Sprint(errs[i]) < fmt.Sprint(errs[j]) })
		}
		return v, nil
	}
	w, err := norm(want)
	if err != nil {
		return "reference body: " + err.Error()
	}
	g, err := norm(got)
	if err != nil {
		return "compiled body: " + err.Error()
	}
	if d := cmp.Diff(w, g); d != "" {
		return "body (-reference +compiled):\n" + d
	}
	return ""
}

// TestDifferentialE2E runs the package's tests again, in a child process,
// with every request compared (see the top of this file).
func TestDifferentialE2E(t *testing.T) {
	if os.Getenv(envDifferential) != "" {
		t.Skip("this is the differential run")
	}
	logPath := filepath.Join(t.TempDir(), "differential.log")
	cmd := exec.Command(os.Args[0], "-test.run", "^Test", "-test.skip", "^(TestDifferential|TestPlan)", "-test.count=1", "-test.timeout=15m")
	cmd.Env = append(os.Environ(), envDifferential+"="+logPath)
	if os.Getenv("CORE_TEST_STORE") == "" {
		cmd.Env = append(cmd.Env, "CORE_TEST_STORE=bolt") // the executors do not depend on the store
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("the differential run failed: %v\n%s", err, tail(out, 8000))
	}
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	total, compiled := 0, 0
	docs := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e diffEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		total++
		docs[e.Query] = true
		if e.Compiled {
			compiled++
		}
		for _, p := range e.Problems {
			t.Errorf("%s\n%s", e.Query, p)
		}
	}
	t.Logf("compared %d requests (%d compiled, %d on graphql.Execute) of %d distinct documents", total, compiled, total-compiled, len(docs))
	if total < 100 || compiled < total/2 {
		t.Errorf("the differential run compared %d requests, %d compiled: too few", total, compiled)
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// bookstore is the spec's schema on a seeded store, compiled twice: once
// running plans, once running graphql.Execute only.
type bookstore struct {
	compiled, reference *Schema
	env                 Env
}

// emptyBookstore is the environment of the instance token of an instance
// of domain running the tests' bookstore (testdata/e2e), over an empty
// bolt store declared for it, with the schema compiled.
func emptyBookstore(t testing.TB, domain string) Env {
	t.Helper()
	m, err := schema.Parse(testfiles.Read(t, "e2e", "bookstore.graphql"), schema.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Build(m, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	st, err := bolt.Open(filepath.Join(t.TempDir(), "bookstore.db"), bolt.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	inst := &tenant.Instance{ID: "inst1", Domain: domain, App: "bookstore", AdminAccountID: "admin"}
	rel := &tenant.Release{App: "bookstore", Name: "v1", Realm: "main", SDL: m.SDL, Model: m}
	inst.SetRelease(rel)
	if err := st.Declare(context.Background(), inst.ID, tenant.Specs(m)); err != nil {
		t.Fatal(err)
	}
	return Env{Store: st, Instance: inst, Release: rel, Schema: s, Principal: auth.Principal{Kind: auth.InstanceAdmin, AccountID: "admin"},
		Accounts: auth.NewAccounts(keyring.Hold(keyring.Generate())), ClientIP: "127.0.0.1"}
}

func newBookstoreFixture(t testing.TB) *bookstore {
	t.Helper()
	bs := &bookstore{env: emptyBookstore(t, "diff.test")}
	reference, err := Build(bs.env.Release.Model, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	reference.referenceOnly = true
	bs.compiled, bs.reference = bs.env.Schema, reference
	var books, authors []any
	for j := 1; j <= 30; j++ {
		b := map[string]any{"core": map[string]any{"id": fmt.Sprintf("b%02d", j)}, "title": fmt.Sprintf("Book %d", j),
			"authorid": j % 7, "price": float64(j*37%100) / 4}
		switch j % 5 {
		case 0:
			b["tags"] = []any{"classic", "poem"}
		case 1:
			b["meta"] = map[string]any{"z": []any{1.0, "two", nil, true}, "a": map[string]any{"deep": 1e21, "small": 1e-7}, "html": "<b>&</b>"}
		case 2:
			b["published"] = "2020-02-03T04:05:06.789Z"
		case 3:
			b["tags"] = []any{}
			b["meta"] = "a string"
		}
		books = append(books, b)
	}
	books[2].(map[string]any)["title"] = "Tab\t<b>&\u2028 \xff é \"q\""
	books[3].(map[string]any)["price"] = 1e-7
	ref := func(id string) map[string]any { return map[string]any{"core": map[string]any{"id": id}} }
	for k := 1; k <= 8; k++ {
		a := map[string]any{"core": map[string]any{"id": fmt.Sprintf("a%d", k)}, "name": fmt.Sprintf("Author %d", k)}
		if k%3 != 0 {
			a["age"] = 20 + k*7
		}
		if k%4 != 0 {
			a["bestbook"] = ref(fmt.Sprintf("b%02d", k*3))
			a["booklist"] = []any{ref(fmt.Sprintf("b%02d", k)), ref(fmt.Sprintf("b%02d", k+10)), ref(fmt.Sprintf("b%02d", 31-k))}
		}
		authors = append(authors, a)
	}
	for _, v := range []map[string]any{
		{"Book": books},
		{"Author": authors, "URL": []any{map[string]any{"core": map[string]any{"id": "u1"}, "path": "/x", "port": 8080, "queryParams": map[string]any{"q": []any{"1"}}}}},
	} {
		res := bs.compiled.Do(context.Background(), bs.env, nil, Request{Query: `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`, Variables: map[string]any{"v": v}})
		if len(res.Errors) > 0 {
			t.Fatalf("seed: %v", res.Errors)
		}
	}
	res := bs.compiled.Do(context.Background(), bs.env, nil, Request{Query: `mutation { trash(type: Book, arcql: "core.id = 'b29' OR core.id = 'b30'") }`})
	if len(res.Errors) > 0 {
		t.Fatalf("seed: %v", res.Errors)
	}
	return bs
}

// check runs a read-only request on both schemas and returns how the
// answers differ ("" when they agree), and whether the document ran on a
// plan. A failure at a non-null root field is reported by graphql.Execute
// for whichever failing field its map order ran first, so the reference
// runs again until it agrees or 64 tries are spent.
func (bs *bookstore) check(req Request) (string, bool) {
	ctx := context.Background()
	got := bs.compiled.Run(ctx, bs.env, nil, req)
	defer got.Release()
	var diff string
	for try := 0; try < 64; try++ {
		want := bs.reference.Run(ctx, bs.env, nil, req)
		if diff = diffResults(want, got); diff == "" {
			break
		}
		if want.Data != nil || got.Value() != nil {
			break
		}
	}
	if diff == "" && got.body != nil {
		doc := bs.compiled.document(req.Query)
		if err := checkOrder(&bs.compiled.gql, doc.ast, req.OperationName, req.Variables, got.DataJSON()); err != nil {
			diff = "key order: " + err.Error()
		}
	}
	return diff, got.compiled
}

// bookstoreDocuments are the documents of the end-to-end tests (reads) and
// more, with their variables.
var bookstoreDocuments = []struct {
	name string
	req  Request
}{
	{"get", Request{Query: `query($id: String!) { get(type: Book, id: $id) { ... on Book { title authorid price core { id created updated } } } }`, Variables: map[string]any{"id": "b05"}}},
	{"get missing", Request{Query: `{ get(type: Book, id: "nope") { __typename } }`}},
	{"get trashed", Request{Query: `{ get(type: Book, id: "b30") { ... on Book { title } } }`}},
	{"find page", Request{Query: `query($q: String!) { find(type: Book, arcql: $q, first: 25) { edges { cursor node { ... on Book { title authorid price core { id created updated } } } }
		pageInfo { hasNextPage endCursor pageLimit } } }`, Variables: map[string]any{"q": "price > 5"}}},
	{"names", Request{Query: `query($t: CoreMutationType!, $q: String!) { find(type: $t, arcql: $q, first: 100) { edges { node { ... on Author { name } ... on Book { title } } } } }`,
		Variables: map[string]any{"t": "Author", "q": "*"}}},
	{"paging", Request{Query: `{ find(type: Book, arcql: "*", first: 5, after: "b10") { edges { cursor node { ... on Book { title } } }
		pageInfo { hasPreviousPage hasNextPage startCursor endCursor pageLimit previousOffsets nextOffsets } } }`}},
	{"paging backward", Request{Query: `{ find(type: Book, arcql: "*", last: 4, before: "b20") { edges { cursor } pageInfo { hasPreviousPage hasNextPage startCursor endCursor previousOffsets nextOffsets } } }`}},
	{"page number", Request{Query: `{ find(type: Book, arcql: "*", first: 7, page: 2) { edges { cursor } pageInfo { hasPreviousPage previousOffsets } } }`}},
	{"references", Request{Query: `query($id: String!) { get(type: Author, id: $id) { ... on Author { name age bestbook { title } booklist { title price } core { id created trashed } } } }`,
		Variables: map[string]any{"id": "a1"}}},
	{"reference arguments", Request{Query: `{ find(type: Author, arcql: "*") { edges { node { ... on Author { name all: booklist { title } some: booklist(first: 1, after: "b02") { title }
		cheap: booklist(arcql: "price < 10") { title price } } } } } }`}},
	{"bad reference filter", Request{Query: `{ find(type: Author, arcql: "*") { edges { node { ... on Author { name booklist(arcql: "nope ((") { title } } } } } }`}},
	{"negative first on a list", Request{Query: `{ get(type: Author, id: "a2") { ... on Author { booklist(first: -1) { title } } } }`}},
	{"bad filter", Request{Query: `query($q: String!) { find(type: Book, arcql: $q) { edges { cursor } } }`, Variables: map[string]any{"q": "title ="}}},
	{"bad page size", Request{Query: `{ find(type: Book, arcql: "*", first: 1001) { edges { cursor } } }`}},
	{"bad cursor", Request{Query: `{ find(type: Book, arcql: "*", after: "nope") { edges { cursor } } }`}},
	{"two failing roots", Request{Query: `{ a: find(type: Book, arcql: "(") { edges { cursor } } b: find(type: Book, arcql: ")") { edges { cursor } } }`}},
	{"core of everything", Request{Query: `{ find(type: Book, arcql: "*", includeTrashed: true, first: 3, before: "LAST") { edges { node { ... on Book { core { id created updated trashed createdBy impl app release instance publisherRealm publisherApp publisherRelease instanceId } } } } } }`}},
	{"json and special characters", Request{Query: `{ find(type: Book, arcql: "*", first: 6) { edges { node { ... on Book { title tags meta published price } } } } }`}},
	{"typename everywhere", Request{Query: `{ __typename find(type: Book, arcql: "*", first: 2) { __typename edges { __typename node { __typename } } pageInfo { __typename } } }`}},
	{"embedded object", Request{Query: `{ get(type: URL, id: "u1") { ... on URL { path port host queryParams core { id } } } }`}},
	{"fragments", Request{Query: `query Q($id: String!) { get(type: Author, id: $id) { ...A } } fragment A on CoreRootAggregate { __typename ... on Author { ...N booklist { ...B } } }
		fragment N on Author { name core { id } } fragment B on Book { title }`, OperationName: "Q", Variables: map[string]any{"id": "a3"}}},
	{"skip and include", Request{Query: `query($s: Boolean!, $i: Boolean!) { find(type: Book, arcql: "*", first: 2) { edges { cursor @skip(if: $s) node { ... on Book @include(if: $i) { title } } } pageInfo @include(if: true) { hasNextPage } } }`,
		Variables: map[string]any{"s": true, "i": false}}},
	{"bad variable", Request{Query: `query($t: CoreMutationType!) { find(type: $t, arcql: "*") { edges { cursor } } }`, Variables: map[string]any{"t": "Nope"}}},
	{"missing variable", Request{Query: `query($t: CoreMutationType!) { find(type: $t, arcql: "*") { edges { cursor } } }`}},
	{"account", Request{Query: `{ find(type: Account, arcql: "*") { edges { node { ... on Account { username emails { value type } enabled } } } } }`}},
	{"introspection falls back", Request{Query: `{ __type(name: "Book") { name kind fields { name } } }`}},
	{"wrong login", Request{Query: `query($u: String!, $p: String!) { login(username: $u, password: $p) { core sessionToken sessionExpires errorCode errorMsg } }`,
		Variables: map[string]any{"u": "nobody", "p": "not the password"}}},
	{"operation name", Request{Query: `query A { get(type: Book, id: "b01") { __typename } } query B { get(type: Book, id: "b02") { ... on Book { title } } }`, OperationName: "B"}},
	{"no operation name", Request{Query: `query A { get(type: Book, id: "b01") { __typename } } query B { __typename }`}},
	{"unknown operation name", Request{Query: `query A { __typename }`, OperationName: "C"}},
}

func TestDifferentialDocuments(t *testing.T) {
	t.Parallel()
	bs := newBookstoreFixture(t)
	for _, tc := range bookstoreDocuments {
		t.Run(tc.name, func(t *testing.T) {
			diff, compiled := bs.check(tc.req)
			if diff != "" {
				t.Error(diff)
			}
			fallback := tc.name == "introspection falls back" || tc.name == "no operation name" || tc.name == "unknown operation name"
			if compiled == fallback {
				t.Errorf("compiled = %v", compiled)
			}
		})
	}
}
