package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/keyring"
	"github.com/corehq/core/server"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt"
	"github.com/corehq/core/tenant"
)

const bookstoreSDL = `type Author { name: String age: Int bestbook: Book booklist: [Book!] }
type Book @indices(sets: [["price"]]) { title: String authorid: Int price: Float }`

// envelope is the body of a failure with one error.
func envelope(message, code string) map[string]any {
	return map[string]any{"errors": []any{map[string]any{"message": message, "extensions": map[string]any{"code": code}}}}
}

func TestRoutesAnswerEnvelopes(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	for _, tc := range []struct {
		name   string
		method string
		path   string
		status int
		want   map[string]any
	}{
		{"healthz", "GET", "/healthz", 200, map[string]any{"status": "ok"}},
		{"readyz", "GET", "/readyz", 200, map[string]any{"status": "ready"}},
		{"no route", "GET", "/nope?x=1", 404, envelope("no such path: GET /nope", "NOT_FOUND")},
		{"wrong method", "DELETE", "/healthz", 405, envelope("method DELETE is not allowed on /healthz", "METHOD_NOT_ALLOWED")},
		{"wrong method on graphql", "PUT", "/graphql", 405, envelope("method PUT is not allowed on /graphql", "METHOD_NOT_ALLOWED")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := env.Do(tc.method, tc.path, nil, nil)
			if status != tc.status {
				t.Errorf("status %d, want %d", status, tc.status)
			}
			if diff := cmp.Diff(tc.want, body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
	res, body := env.DoRaw("HEAD", "/nope", nil, nil)
	if res.StatusCode != 404 || len(body) != 0 {
		t.Errorf("HEAD /nope: %d with %d bytes, want 404 without a body", res.StatusCode, len(body))
	}
	res, _ = env.DoRaw("POST", "/healthz", nil, nil)
	if allow := res.Header.Get("Allow"); !strings.Contains(allow, "GET") {
		t.Errorf("405 Allow header = %q, want GET listed", allow)
	}
}

// pingStore fails Ping on demand.
type pingStore struct {
	store.Store
	down bool
}

func (s *pingStore) Ping(ctx context.Context) error {
	if s.down {
		return errors.New("bolt: connection to the moon lost")
	}
	return s.Store.Ping(ctx)
}

func TestReadyz(t *testing.T) {
	t.Parallel()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "core.db"), bolt.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ps := &pingStore{Store: st}
	reg := tenant.NewDirectory(ps)
	accounts := auth.NewAccounts(keyring.Hold(keyring.Generate()))
	engine := gql.NewEngine(gql.DefaultConfig(), ps, reg, accounts, zap.NewNop())
	h := server.New(server.DefaultConfig(), zap.NewNop(), ps, reg, engine).Handler()
	get := func() (int, map[string]any) {
		req, err := http.NewRequest("GET", "/readyz", nil)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("readyz answered %q", rec.Body.String())
		}
		return rec.Code, body
	}

	if status, body := get(); status != 503 || cmp.Diff(envelope("not ready: the instances are not loaded yet", "UNAVAILABLE"), body) != "" {
		t.Errorf("before Load: %d %v, want 503 UNAVAILABLE", status, body)
	}
	if err := reg.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if status, _ := get(); status != 200 {
		t.Errorf("after Load: %d, want 200", status)
	}
	ps.down = true
	status, body := get()
	if msg, code := servertest.FirstError(body); status != 503 || code != "UNAVAILABLE" || strings.Contains(msg, "moon") {
		t.Errorf("store down: %d %s %q, want 503 UNAVAILABLE without the store's text", status, code, msg)
	}
}

// blockingReader yields n bytes, then blocks until done is closed.
type blockingReader struct {
	n    int
	done chan struct{}
}

func (b *blockingReader) Read(p []byte) (int, error) {
	if b.n == 0 {
		<-b.done
		return 0, io.EOF
	}
	k := min(len(p), b.n)
	for i := range k {
		p[i] = ' '
	}
	b.n -= k
	return k, nil
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.BodyLimit = 1024 }))
	env.PutRelease("bookstore", "v1", bookstoreSDL) // a small body passes
	token := env.CreateInstance("a.test", "bookstore", "v1", tenant.Settings{})
	big := map[string]any{"schema": bookstoreSDL + "\n#" + strings.Repeat("x", 2000)}
	tooLarge := envelope("request body is larger than the limit of 1024 bytes", "TOO_LARGE")

	t.Run("declared length", func(t *testing.T) {
		status, body := env.Do("PUT", "/admin/v1/apps/bookstore/releases/v2", env.AdminHeaders(), big)
		if status != 413 || cmp.Diff(tooLarge, body) != "" {
			t.Errorf("%d %v, want 413 TOO_LARGE", status, body)
		}
	})
	t.Run("chunked", func(t *testing.T) {
		b, _ := json.Marshal(big)
		req, _ := http.NewRequest("PUT", env.URL+"/admin/v1/apps/bookstore/releases/v2", io.MultiReader(strings.NewReader(string(b))))
		req.Header.Set("authorization", servertest.AdminToken)
		res, err := env.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		json.NewDecoder(res.Body).Decode(&body)
		if _, code := servertest.FirstError(body); res.StatusCode != 413 || code != "TOO_LARGE" {
			t.Errorf("%d %v, want 413 TOO_LARGE", res.StatusCode, body)
		}
	})
	t.Run("graphql", func(t *testing.T) {
		q := map[string]any{"query": "{ __typename }", "variables": map[string]any{"pad": strings.Repeat("x", 2000)}}
		status, body := env.Do("POST", "/graphql", map[string]string{"core-domain": "a.test", "authorization": token}, q)
		if _, code := servertest.FirstError(body); status != 413 || code != "TOO_LARGE" {
			t.Errorf("%d %v, want 413 TOO_LARGE", status, body)
		}
	})
	t.Run("refused before it is sent", func(t *testing.T) {
		// A body declared as 100 MiB of which only 4 KiB ever arrive: the
		// answer comes without the server waiting for (or buffering) the rest.
		done := make(chan struct{})
		defer close(done)
		req, _ := http.NewRequest("PUT", env.URL+"/admin/v1/apps/bookstore/releases/v2", &blockingReader{n: 4096, done: done})
		req.ContentLength = 100 << 20
		req.Header.Set("authorization", servertest.AdminToken)
		res, err := env.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 413 {
			t.Errorf("status %d, want 413", res.StatusCode)
		}
	})
	if _, ok := env.Directory.Release("bookstore", "v2"); ok {
		t.Error("an oversized release was published")
	}
}

func TestPanicIsRecovered(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.InfoLevel)
	env := servertest.Start(t,
		servertest.WithLogger(zap.New(core)),
		servertest.WithRoutes(func(e *echo.Echo) {
			e.GET("/test/panic", func(c echo.Context) error { panic("kaboom: secret internals") })
		}))
	res, raw := env.DoRaw("GET", "/test/panic", nil, nil)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("answer %q: %v", raw, err)
	}
	if res.StatusCode != 500 || cmp.Diff(envelope("internal error", "INTERNAL"), body) != "" {
		t.Errorf("%d %s, want 500 with the INTERNAL envelope", res.StatusCode, raw)
	}
	panics := logs.FilterMessage("panic").All()
	if len(panics) != 1 {
		t.Fatalf("%d panic log entries, want 1", len(panics))
	}
	ctx := panics[0].ContextMap()
	if stack, _ := ctx["stack"].(string); !strings.Contains(stack, "server_test.TestPanicIsRecovered") {
		t.Errorf("the panic log has no stack naming the handler: %v", ctx)
	}
	if ctx["request_id"] != res.Header.Get("X-Request-Id") || ctx["request_id"] == "" {
		t.Errorf("panic logged with request id %v, answered %q", ctx["request_id"], res.Header.Get("X-Request-Id"))
	}
	reqs := logs.FilterMessage("request").All()
	if len(reqs) != 1 || reqs[0].ContextMap()["status"] != int64(500) {
		t.Errorf("request log: %v, want one line with status 500", reqs)
	}
	// The server still serves.
	if status, _ := env.Do("GET", "/healthz", nil, nil); status != 200 {
		t.Errorf("after a panic /healthz answers %d", status)
	}
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.InfoLevel)
	env := servertest.Start(t, servertest.WithLogger(zap.New(core)))
	env.PutRelease("bookstore", "v1", bookstoreSDL)
	token := env.CreateInstance("a.test", "bookstore", "v1", tenant.Settings{})
	logs.TakeAll() // only the requests below

	const secretQuery, password = "qs-secret-value", "hunter2-password"
	steps := []struct {
		name      string
		method    string
		path      string
		headers   map[string]string
		body      any
		requestID string // sent as X-Request-Id
		wantID    string // "" = a generated one
		wantPath  string
		domain    any
	}{
		{"admin with a query string", "GET", "/admin/v1/apps?token=" + secretQuery, env.AdminHeaders(), nil, "req-123", "req-123", "/admin/v1/apps", nil},
		{"graphql with a password", "POST", "/graphql", map[string]string{"core-domain": "a.test", "authorization": token},
			map[string]any{"query": `mutation { login(username: "x", password: "` + password + `") { sessionToken } }`}, "", "", "/graphql", "a.test"},
		{"GET graphql with the query in the URL", "GET", "/graphql?query=%7B__typename%7D&pw=" + password, map[string]string{"core-domain": "a.test", "authorization": "Bearer " + token},
			nil, "bad id with spaces", "", "/graphql", "a.test"},
		{"unknown domain", "POST", "/graphql", map[string]string{"core-domain": "nope.test", "authorization": token},
			map[string]any{"query": "{ __typename }"}, "", "", "/graphql", nil},
	}
	for _, s := range steps {
		h := map[string]string{}
		for k, v := range s.headers {
			h[k] = v
		}
		if s.requestID != "" {
			h["X-Request-Id"] = s.requestID
		}
		res, _ := env.DoRaw(s.method, s.path, h, s.body)
		gotID := res.Header.Get("X-Request-Id")
		if s.wantID != "" && gotID != s.wantID || s.wantID == "" && len(gotID) != 26 {
			t.Errorf("%s: answered X-Request-Id %q, want %q (or a generated ULID)", s.name, gotID, s.wantID)
		}
		entries := logs.TakeAll()
		if len(entries) != 1 || entries[0].Message != "request" {
			t.Fatalf("%s: %d log entries %v, want one request line", s.name, len(entries), entries)
		}
		f := entries[0].ContextMap()
		want := map[string]any{"request_id": gotID, "method": s.method, "path": s.wantPath, "status": int64(res.StatusCode), "domain": s.domain}
		got := map[string]any{"request_id": f["request_id"], "method": f["method"], "path": f["path"], "status": f["status"], "domain": f["domain"]}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: log line (-want +got):\n%s", s.name, diff)
		}
		if _, ok := f["latency"]; !ok {
			t.Errorf("%s: no latency logged", s.name)
		}
		if _, ok := f["bytes"]; !ok {
			t.Errorf("%s: no bytes logged", s.name)
		}
		line, _ := json.Marshal(f)
		for _, secret := range []string{servertest.AdminToken, token, secretQuery, password} {
			if strings.Contains(string(line), secret) {
				t.Errorf("%s: the log line holds a secret: %s", s.name, line)
			}
		}
	}
}

// TestOneDomainPerRequest: a request naming two different instances in
// core-domain (two header lines, or one with a comma) is refused with 400
// naming the header, at every door that reads it; the same domain twice
// is one.
func TestOneDomainPerRequest(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("bookstore", "v1", bookstoreSDL)
	a := env.CreateInstance("a.test", "bookstore", "v1", tenant.Settings{})
	env.CreateInstance("b.test", "bookstore", "v1", tenant.Settings{})
	send := func(method, path, body string, domains ...string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, env.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("content-type", "application/json")
		req.Header.Set("authorization", a)
		for _, d := range domains {
			req.Header.Add(tenant.Header, d)
		}
		res, b := servertest.Send(t, env.Client, req)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return res.StatusCode, out
	}
	doors := []struct{ method, path, body string }{
		{"POST", "/graphql", `{"query":"{ __typename }"}`},
		{"GET", "/rest/v1/Book", ""},
	}
	for _, d := range doors {
		for _, domains := range [][]string{{"a.test", "b.test"}, {"a.test, b.test"}, {"b.test", "a.test"}} {
			status, body := send(d.method, d.path, d.body, domains...)
			if msg, code := servertest.FirstError(body); status != 400 || code != "BAD_REQUEST" || !strings.Contains(msg, tenant.Header) {
				t.Errorf("%s %s with %q: %d %v, want 400 naming %s", d.method, d.path, domains, status, body, tenant.Header)
			}
		}
		if status, body := send(d.method, d.path, d.body, "a.test", "A.TEST"); status != 200 {
			t.Errorf("%s %s with the same domain twice: %d %v, want 200", d.method, d.path, status, body)
		}
	}
}
