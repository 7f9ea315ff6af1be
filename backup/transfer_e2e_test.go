package backup_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/tenant"
)

func TestMain(m *testing.M) { os.Exit(mongotest.Main(m)) }

const transferSDL = `type Author @indices(sets: [["name"]]) { name: String  best: Book  books: [Book!] }
type Book { title: String  price: Float  authorid: Int }
`

// transferQueries are answered the same by the exported instance and by
// the one imported from it.
var transferQueries = []string{
	`{ find(type: Book, arcql: "*", first: 100) { edges { cursor node { ... on Book { title price authorid } } } } }`,
	`{ find(type: Author, arcql: "name = 'Ann'") { edges { cursor node { ... on Author { name best { title } books { title price } } } } } }`,
	`{ aggregate { book { core { count } price { sum avg min max } authorid { sum } } } }`,
	`{ find(type: Account, arcql: "username = 'ann'") { edges { cursor } } }`,
}

// TestExportImportAcrossStores exports an instance of the embedded store
// (references, a trashed record, an account, a grant) through the admin
// API and imports it on a server on the MongoDB-wire test server, which
// then answers the same finds, gets, aggregates and logins; a corrupt
// export, a taken domain and an export past the quota are refused with
// nothing kept.
func TestExportImportAcrossStores(t *testing.T) {
	t.Parallel()
	src := servertest.Start(t, servertest.WithStore(bolttest.Open(t)))
	src.PutRelease("shop", "v1", transferSDL)
	token := src.CreateInstance("src.test", "shop", "v1", tenant.Settings{})
	gq := func(e *servertest.Env, domain, token, q string, vars map[string]any) map[string]any {
		t.Helper()
		st, body := e.GraphQL(domain, token, q, vars)
		if st != 200 || body["errors"] != nil {
			t.Fatalf("%s on %s: %d %v", q, domain, st, body)
		}
		return body["data"].(map[string]any)
	}
	up := func(typ string, v map[string]any) string {
		d := gq(src, "src.test", token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`, map[string]any{"v": map[string]any{typ: v}})
		return d["upsert"].([]any)[0].(map[string]any)["id"].(string)
	}
	ref := func(id string) map[string]any { return map[string]any{"core": map[string]any{"id": id}} }
	var books []string
	for i, p := range []float64{12.5, 3, 7.25} {
		books = append(books, up("Book", map[string]any{"title": "T" + string(rune('a'+i)), "price": p, "authorid": i + 1}))
	}
	author := up("Author", map[string]any{"name": "Ann", "best": ref(books[1]), "books": []any{ref(books[0]), ref(books[1])}})
	gq(src, "src.test", token, `mutation($a: String!) { trash(type: Book, arcql: $a) }`, map[string]any{"a": "core.id = '" + books[2] + "'"})
	acct := gq(src, "src.test", token, `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
		map[string]any{"v": map[string]any{"username": "ann", "password": map[string]any{"value": "correct horse battery"}}})
	up("AccessRight", map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query", "operation": "find",
		"permissionType": "SBP", "members": []any{ref(acct["createAccount"].(map[string]any)["id"].(string))}})
	getAuthor := `query($id: String!) { get(type: Author, id: $id) { ... on Author { name best { title } books { title } } } }`
	want := map[string]any{}
	for _, q := range transferQueries {
		want[q] = gq(src, "src.test", token, q, nil)
	}
	want[getAuthor] = gq(src, "src.test", token, getAuthor, map[string]any{"id": author})

	res, export := src.DoRaw("GET", "/admin/v1/instances/src.test/export", src.AdminHeaders(), nil)
	if res.StatusCode != 200 || res.Header.Get("content-type") != "application/gzip" {
		t.Fatalf("export: %d %s", res.StatusCode, res.Header.Get("content-type"))
	}

	dst := servertest.Start(t, servertest.WithStore(mongotest.Open(t)))
	dst.PutRelease("shop", "v1", transferSDL)
	importInto := func(domain string, body []byte) (int, map[string]any) {
		t.Helper()
		res, out := dst.DoRaw("POST", "/admin/v1/instances/"+domain+"/import", dst.AdminHeaders(), body)
		var m map[string]any
		_ = jsonUnmarshal(out, &m)
		return res.StatusCode, m
	}
	st, body := importInto("moved.test", export)
	newToken, _ := body["token"].(string)
	if st != http.StatusCreated || newToken == "" {
		t.Fatalf("import: %d %v", st, body)
	}
	for q, w := range want {
		var vars map[string]any
		if q == getAuthor {
			vars = map[string]any{"id": author}
		}
		if d := cmp.Diff(w, gq(dst, "moved.test", newToken, q, vars)); d != "" {
			t.Errorf("%s (-exported +imported):\n%s", q, d)
		}
	}
	login := gq(dst, "moved.test", "", `query { login(username: "ann", password: "correct horse battery") { sessionToken } }`, nil)
	if tok, _ := login["login"].(map[string]any)["sessionToken"].(string); tok == "" {
		t.Errorf("login on the imported instance: %v", login)
	}

	for _, tc := range []struct {
		name, domain string
		body         []byte
		status       int
	}{
		{"cut short", "cut.test", export[:len(export)-40], http.StatusBadRequest},
		{"not an export", "junk.test", []byte("hello"), http.StatusBadRequest},
		{"the domain is taken", "moved.test", export, http.StatusConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := importInto(tc.domain, tc.body)
			if st != tc.status {
				t.Errorf("import: %d %v, want %d", st, body, tc.status)
			}
			if tc.domain != "moved.test" {
				if st, _ := dst.Admin("GET", "/instances/"+tc.domain, nil); st != http.StatusNotFound {
					t.Errorf("after a failed import, GET of the instance = %d, want 404", st)
				}
			}
		})
	}
	t.Run("over quota", func(t *testing.T) {
		if st, body := src.Admin("PATCH", "/instances/src.test", map[string]any{"quota": map[string]any{"records": 3}}); st != 200 {
			t.Fatalf("setting a quota: %d %v", st, body)
		}
		_, export := src.DoRaw("GET", "/admin/v1/instances/src.test/export", src.AdminHeaders(), nil)
		st, body := importInto("quota.test", export)
		if st != http.StatusForbidden || !bytes.Contains([]byte(dumpJSON(body)), []byte("QUOTA_EXCEEDED")) {
			t.Errorf("import past the quota: %d %v", st, body)
		}
		if st, _ := dst.Admin("GET", "/instances/quota.test", nil); st != http.StatusNotFound {
			t.Errorf("after a refused import, GET of the instance = %d, want 404", st)
		}
	})
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func dumpJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
