package admin_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

const (
	bookstoreSDL = `type Author { name: String age: Int bestbook: Book booklist: [Book!] }
type Book @indices(sets: [["price"]]) { title: String authorid: Int price: Float }`
	v2SDL  = bookstoreSDL + "\ntype Shelf { label: String }"
	badSDL = "type Book {\n  title: Strin\n  author: Writer\n}"
)

// step is one request of a scenario and what it must answer.
type step struct {
	name    string
	method  string
	path    string // under /admin/v1
	headers map[string]string
	noAuth  bool // send no admin token (headers may still carry one)
	body    any
	status  int
	code    string // extensions.code of the first error
	message string // a regexp the first error's message must match
	check   func(t *testing.T, body map[string]any)
}

func run(t *testing.T, env *servertest.Env, steps []step) {
	t.Helper()
	for _, s := range steps {
		h := s.headers
		if !s.noAuth {
			h = env.AdminHeaders()
		}
		status, body := env.Do(s.method, "/admin/v1"+s.path, h, s.body)
		msg, code := servertest.FirstError(body)
		if status != s.status || code != s.code || (s.message != "" && !regexp.MustCompile(s.message).MatchString(msg)) {
			t.Fatalf("%s: %s %s answered %d %s %q, want %d %s matching %q\n%s",
				s.name, s.method, s.path, status, code, msg, s.status, s.code, s.message, dump(body))
		}
		if s.check != nil {
			s.check(t, body)
		}
	}
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// fields picks some fields of an answer, for cmp.Diff.
func fields(body map[string]any, names ...string) map[string]any {
	out := map[string]any{}
	for _, n := range names {
		out[n] = body[n]
	}
	return out
}

func wantFields(want map[string]any) func(t *testing.T, body map[string]any) {
	return func(t *testing.T, body map[string]any) {
		t.Helper()
		names := make([]string, 0, len(want))
		for n := range want {
			names = append(names, n)
		}
		if diff := cmp.Diff(want, fields(body, names...)); diff != "" {
			t.Errorf("answer (-want +got):\n%s", diff)
		}
	}
}

func TestReleases(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	run(t, env, []step{
		{name: "publish", method: "PUT", path: "/apps/bookstore/releases/v1", body: map[string]any{"schema": bookstoreSDL},
			status: 200, check: wantFields(map[string]any{
				"app": "bookstore", "release": "v1", "realm": "main", "status": "created",
				"types": []any{"Author", "Book"}, "instances": []any{},
			})},
		{name: "same again is idempotent", method: "PUT", path: "/apps/bookstore/releases/v1", body: map[string]any{"schema": bookstoreSDL},
			status: 200, check: wantFields(map[string]any{"status": "unchanged"})},
		{name: "replace while no instance runs it", method: "PUT", path: "/apps/bookstore/releases/v1", body: map[string]any{"schema": v2SDL},
			status: 200, check: wantFields(map[string]any{"status": "replaced", "types": []any{"Author", "Book", "Shelf"}})},
		{name: "read back", method: "GET", path: "/apps/bookstore/releases/v1",
			status: 200, check: wantFields(map[string]any{"schema": v2SDL, "realm": "main"})},
		{name: "read back unknown", method: "GET", path: "/apps/bookstore/releases/v9",
			status: 404, code: "NOT_FOUND", message: "bookstore/v9"},
		{name: "with a realm", method: "PUT", path: "/apps/bookstore/releases/v2", body: map[string]any{"realm": "acme", "schema": bookstoreSDL},
			status: 200, check: wantFields(map[string]any{"realm": "acme", "status": "created"})},
		{name: "create instance", method: "POST", path: "/instances", body: map[string]any{"domain": "a.test", "app": "bookstore", "release": "v1"},
			status: 201},
		{name: "changed SDL while an instance runs it", method: "PUT", path: "/apps/bookstore/releases/v1", body: map[string]any{"schema": bookstoreSDL},
			status: 409, code: "CONFLICT", message: `immutable while instances run it \(a\.test\): publish a new release`},
		{name: "same SDL while an instance runs it", method: "PUT", path: "/apps/bookstore/releases/v1", body: map[string]any{"schema": v2SDL},
			status: 200, check: wantFields(map[string]any{"status": "unchanged", "instances": []any{"a.test"}})},
		{name: "list apps", method: "GET", path: "/apps", status: 200, check: func(t *testing.T, body map[string]any) {
			want := []any{map[string]any{"app": "bookstore", "releases": []any{
				map[string]any{"app": "bookstore", "release": "v1", "realm": "main", "types": []any{"Author", "Book", "Shelf"}, "instances": []any{"a.test"}},
				map[string]any{"app": "bookstore", "release": "v2", "realm": "acme", "types": []any{"Author", "Book"}, "instances": []any{}},
			}}}
			if diff := cmp.Diff(want, body["apps"]); diff != "" {
				t.Errorf("apps (-want +got):\n%s", diff)
			}
		}},
	})
}

func TestReleaseBadInput(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	put := "/apps/bookstore/releases/v1"
	run(t, env, []step{
		{name: "invalid SDL", method: "PUT", path: put, body: map[string]any{"schema": badSDL},
			status: 400, code: "BAD_REQUEST", message: `^invalid schema: 2:\d+: .*Strin`,
			check: func(t *testing.T, body map[string]any) {
				errs := body["errors"].([]any)
				if len(errs) != 2 {
					t.Fatalf("%d errors, want one per problem (2): %s", len(errs), dump(body))
				}
				for i, line := range []float64{2, 3} {
					e := errs[i].(map[string]any)
					ext := e["extensions"].(map[string]any)
					if ext["line"] != line || ext["column"] == nil || ext["code"] != "BAD_REQUEST" {
						t.Errorf("error %d: %s, want line %v with a column", i, dump(e), line)
					}
				}
			}},
		{name: "syntax error", method: "PUT", path: put, body: map[string]any{"schema": "type Book {"},
			status: 400, code: "BAD_REQUEST", message: `^invalid schema: 1:\d+: `},
		{name: "nothing stored", method: "GET", path: "/apps/bookstore/releases/v1", status: 404, code: "NOT_FOUND"},
		{name: "no schema", method: "PUT", path: put, body: map[string]any{"realm": "main"},
			status: 400, code: "BAD_REQUEST", message: `"schema" is required`},
		{name: "unknown field", method: "PUT", path: put, body: map[string]any{"shema": bookstoreSDL},
			status: 400, code: "BAD_REQUEST", message: `unknown field "shema"`},
		{name: "array body", method: "PUT", path: put, body: "[]",
			status: 400, code: "BAD_REQUEST", message: "must be a JSON object"},
		{name: "string body", method: "PUT", path: put, body: `"type Book { title: String }"`,
			status: 400, code: "BAD_REQUEST", message: "must be a JSON object"},
		{name: "empty body", method: "PUT", path: put, body: "",
			status: 400, code: "BAD_REQUEST", message: "request body is required"},
		{name: "malformed JSON", method: "PUT", path: put, body: `{"schema": }`,
			status: 400, code: "BAD_REQUEST", message: "malformed JSON at byte"},
		{name: "truncated JSON", method: "PUT", path: put, body: `{"schema": "x"`,
			status: 400, code: "BAD_REQUEST", message: "malformed JSON"},
		{name: "two objects", method: "PUT", path: put, body: `{"schema": "x"} {}`,
			status: 400, code: "BAD_REQUEST", message: "one JSON object"},
		{name: "wrong type", method: "PUT", path: put, body: map[string]any{"schema": 5},
			status: 400, code: "BAD_REQUEST", message: `field "schema" must be a string, not number`},
		{name: "bad app name", method: "PUT", path: "/apps/book%20store/releases/v1", body: map[string]any{"schema": bookstoreSDL},
			status: 400, code: "BAD_REQUEST", message: `app "book store"`},
		{name: "bad realm", method: "PUT", path: put, body: map[string]any{"schema": bookstoreSDL, "realm": "a/b"},
			status: 400, code: "BAD_REQUEST", message: `realm "a/b"`},
	})
}

func TestAdminToken(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	run(t, env, []step{
		{name: "no token", method: "GET", path: "/apps", noAuth: true, status: 401, code: "UNAUTHENTICATED", message: "admin token required"},
		{name: "wrong token", method: "GET", path: "/apps", noAuth: true, headers: map[string]string{"authorization": "nope"},
			status: 401, code: "UNAUTHENTICATED", message: "invalid admin token"},
		{name: "token with a suffix", method: "GET", path: "/apps", noAuth: true, headers: map[string]string{"authorization": servertest.AdminToken + "x"},
			status: 401, code: "UNAUTHENTICATED"},
		{name: "no token, write", method: "PUT", path: "/apps/x/releases/v1", noAuth: true, body: map[string]any{"schema": bookstoreSDL},
			status: 401, code: "UNAUTHENTICATED"},
		{name: "no token, unknown path", method: "GET", path: "/secret", noAuth: true, status: 404, code: "NOT_FOUND"},
		{name: "wrong method", method: "DELETE", path: "/apps", status: 405, code: "METHOD_NOT_ALLOWED", message: "method DELETE is not allowed"},
		{name: "bearer token", method: "GET", path: "/apps", noAuth: true, headers: map[string]string{"authorization": "Bearer " + servertest.AdminToken},
			status: 200},
		{name: "bare token", method: "GET", path: "/apps", status: 200},
		{name: "unknown path with the token", method: "GET", path: "/secret", status: 404, code: "NOT_FOUND"},
	})
	// Nothing was published without the token.
	if len(env.Directory.Releases()) != 0 {
		t.Error("a release was published without the admin token")
	}
}

func TestInstances(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("bookstore", "v1", bookstoreSDL)
	env.PutRelease("bookstore", "v2", v2SDL)
	var token string
	var instanceID string
	run(t, env, []step{
		{name: "create", method: "POST", path: "/instances",
			body:   map[string]any{"domain": "a.test", "app": "bookstore", "release": "v1", "anonymousRequests": true, "env": map[string]any{"K": "v"}},
			status: 201, check: func(t *testing.T, body map[string]any) {
				token, _ = body["token"].(string)
				instanceID, _ = body["instanceId"].(string)
				if len(token) < 40 || len(instanceID) != 26 || body["adminAccountId"] == "" {
					t.Errorf("create answered %s", dump(body))
				}
				wantFields(map[string]any{"domain": "a.test", "app": "bookstore", "release": "v1", "realm": "main",
					"anonymousRequests": true, "anonymousRegistration": false, "env": map[string]any{"K": "v"}})(t, body)
			}},
		{name: "create a second", method: "POST", path: "/instances", body: map[string]any{"domain": "b.test", "app": "bookstore", "release": "v1"},
			status: 201},
		{name: "taken domain", method: "POST", path: "/instances", body: map[string]any{"domain": "A.test", "app": "bookstore", "release": "v1"},
			status: 409, code: "CONFLICT", message: "a.test is already taken"},
		{name: "unknown app", method: "POST", path: "/instances", body: map[string]any{"domain": "c.test", "app": "shop", "release": "v1"},
			status: 404, code: "NOT_FOUND", message: "app shop does not exist"},
		{name: "unknown release", method: "POST", path: "/instances", body: map[string]any{"domain": "c.test", "app": "bookstore", "release": "v7"},
			status: 404, code: "NOT_FOUND", message: "bookstore has no release v7"},
		{name: "missing domain", method: "POST", path: "/instances", body: map[string]any{"app": "bookstore", "release": "v1"},
			status: 400, code: "BAD_REQUEST", message: "domain is required"},
		{name: "bad domain", method: "POST", path: "/instances", body: map[string]any{"domain": "a_b.test", "app": "bookstore", "release": "v1"},
			status: 400, code: "BAD_REQUEST", message: "not a host name"},
		{name: "unknown field", method: "POST", path: "/instances", body: map[string]any{"domain": "c.test", "app": "bookstore", "release": "v1", "anonymous": true},
			status: 400, code: "BAD_REQUEST", message: `unknown field "anonymous"`},
		{name: "env of numbers", method: "POST", path: "/instances", body: map[string]any{"domain": "c.test", "app": "bookstore", "release": "v1", "env": map[string]any{"K": 1}},
			status: 400, code: "BAD_REQUEST", message: `field "env" must be a string, not number`},
		{name: "get", method: "GET", path: "/instances/A.TEST", status: 200, check: func(t *testing.T, body map[string]any) {
			if _, ok := body["token"]; ok {
				t.Error("GET shows the token")
			}
			wantFields(map[string]any{"domain": "a.test", "instanceId": instanceID, "release": "v1", "env": map[string]any{"K": "v"}})(t, body)
		}},
		{name: "get unknown", method: "GET", path: "/instances/nope.test", status: 404, code: "NOT_FOUND", message: "nope.test"},
		{name: "list", method: "GET", path: "/instances", status: 200, check: func(t *testing.T, body map[string]any) {
			var domains []any
			for _, v := range body["instances"].([]any) {
				domains = append(domains, v.(map[string]any)["domain"])
			}
			if diff := cmp.Diff([]any{"a.test", "b.test"}, domains); diff != "" {
				t.Errorf("listed domains (-want +got):\n%s", diff)
			}
		}},
		{name: "patch settings", method: "PATCH", path: "/instances/a.test", body: map[string]any{"anonymousRegistration": true, "env": map[string]any{}},
			status: 200, check: wantFields(map[string]any{"anonymousRequests": true, "anonymousRegistration": true, "env": map[string]any{}, "release": "v1"})},
		{name: "patch release", method: "PATCH", path: "/instances/a.test", body: map[string]any{"release": "v2"},
			status: 200, check: func(t *testing.T, body map[string]any) {
				wantFields(map[string]any{"release": "v2", "anonymousRequests": true, "instanceId": instanceID})(t, body)
			}},
		{name: "patch nothing", method: "PATCH", path: "/instances/a.test", body: map[string]any{},
			status: 200, check: wantFields(map[string]any{"release": "v2"})},
		{name: "patch to an unknown release", method: "PATCH", path: "/instances/a.test", body: map[string]any{"release": "v9"},
			status: 404, code: "NOT_FOUND", message: "no release v9"},
		{name: "patch an unknown field", method: "PATCH", path: "/instances/a.test", body: map[string]any{"app": "other"},
			status: 400, code: "BAD_REQUEST", message: `unknown field "app"`},
		{name: "patch a wrong type", method: "PATCH", path: "/instances/a.test", body: map[string]any{"anonymousRequests": "yes"},
			status: 400, code: "BAD_REQUEST", message: `field "anonymousRequests" must be a boolean, not string`},
		{name: "patch unknown", method: "PATCH", path: "/instances/nope.test", body: map[string]any{"anonymousRequests": true},
			status: 404, code: "NOT_FOUND"},
		{name: "v1 is free: b.test still runs it", method: "PUT", path: "/apps/bookstore/releases/v1", body: map[string]any{"schema": v2SDL},
			status: 409, code: "CONFLICT", message: `b\.test`},
		{name: "delete", method: "DELETE", path: "/instances/b.test", status: 200, check: wantFields(map[string]any{"domain": "b.test"})},
		{name: "deleted", method: "GET", path: "/instances/b.test", status: 404, code: "NOT_FOUND"},
		{name: "delete again", method: "DELETE", path: "/instances/b.test", status: 404, code: "NOT_FOUND"},
		{name: "v1 is free now", method: "PUT", path: "/apps/bookstore/releases/v1", body: map[string]any{"schema": v2SDL},
			status: 200, check: wantFields(map[string]any{"status": "replaced"})},
		{name: "domain reusable", method: "POST", path: "/instances", body: map[string]any{"domain": "b.test", "app": "bookstore", "release": "v1"},
			status: 201, check: func(t *testing.T, body map[string]any) {
				if body["instanceId"] == instanceID {
					t.Error("a new instance reuses an id")
				}
			}},
	})
	if token == "" {
		t.Fatal("no token")
	}
}

// TestSharedCompiledSchema: instances of one release serve one compiled
// schema; a release swap moves only the instance swapped.
func TestSharedCompiledSchema(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("bookstore", "v1", bookstoreSDL)
	env.PutRelease("bookstore", "v2", v2SDL)
	env.CreateInstance("a.test", "bookstore", "v1", tenant.Settings{})
	env.CreateInstance("b.test", "bookstore", "v1", tenant.Settings{})
	a, _ := env.Directory.Lookup("a.test")
	b, _ := env.Directory.Lookup("b.test")
	ca, errA := env.Engine.Schema(a.Release())
	cb, errB := env.Engine.Schema(b.Release())
	if errA != nil || errB != nil || ca != cb {
		t.Fatalf("two instances of one release hold different compiled schemas (%v, %v)", errA, errB)
	}
	old := a.Release()
	if status, body := env.Admin(http.MethodPatch, "/instances/a.test", map[string]any{"release": "v2"}); status != 200 {
		t.Fatalf("PATCH: %d %s", status, dump(body))
	}
	if a.Release().Name != "v2" || b.Release() != old {
		t.Errorf("after the swap a serves %s, b %s; want v2 and v1", a.Release().Name, b.Release().Name)
	}
}

func TestRotateToken(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("bookstore", "v1", bookstoreSDL)
	old := env.CreateInstance("a.test", "bookstore", "v1", tenant.Settings{})
	query := "{ __typename }"
	if status, body := env.GraphQL("a.test", old, query, nil); status == 401 {
		t.Fatalf("the new instance's token is refused: %s", dump(body))
	}
	status, body := env.Admin(http.MethodPost, "/instances/a.test/token", nil)
	token, _ := body["token"].(string)
	if status != 200 || token == "" || token == old || body["domain"] != "a.test" {
		t.Fatalf("rotate answered %d %s", status, dump(body))
	}
	status, body = env.GraphQL("a.test", old, query, nil)
	if msg, code := servertest.FirstError(body); status != 401 || code != "UNAUTHENTICATED" {
		t.Errorf("the old token after rotation: %d %s %q, want 401 UNAUTHENTICATED", status, code, msg)
	}
	if status, body := env.GraphQL("a.test", token, query, nil); status == 401 {
		t.Errorf("the new token is refused: %s", dump(body))
	}
	if status, _ := env.Admin(http.MethodPost, "/instances/nope.test/token", nil); status != 404 {
		t.Errorf("rotating an unknown instance: %d, want 404", status)
	}
	if status, _ := env.Do(http.MethodPost, "/admin/v1/instances/a.test/token", nil, nil); status != 401 {
		t.Errorf("rotating without the admin token: %d, want 401", status)
	}
}

// TestInstanceDataIsDropped: DELETE removes the instance's records.
func TestInstanceDataIsDropped(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("bookstore", "v1", bookstoreSDL)
	env.CreateInstance("a.test", "bookstore", "v1", tenant.Settings{})
	inst, _ := env.Directory.Lookup("a.test")
	ctx := t.Context()
	if _, err := env.Store.Get(ctx, inst.ID, "Account", inst.AdminAccountID); err != nil {
		t.Fatalf("the admin account is missing: %v", err)
	}
	if status, body := env.Admin(http.MethodDelete, "/instances/a.test", nil); status != 200 {
		t.Fatalf("DELETE: %d %s", status, dump(body))
	}
	if _, err := env.Store.Get(ctx, inst.ID, "Account", inst.AdminAccountID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after DELETE the admin account reads: %v, want not found", err)
	}
}
