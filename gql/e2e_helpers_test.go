package gql_test

import (
	"encoding/json"
	"testing"

	"github.com/corehq/core/internal/testfiles"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/tenant"
)

// bookstoreSDL is the spec's Author/Book schema used by the end-to-end tests.
func bookstoreSDL(t testing.TB) string {
	t.Helper()
	return testfiles.Read(t, "e2e", "bookstore.graphql")
}

// client talks GraphQL to one instance of a real in-process server.
type client struct {
	t      testing.TB
	env    *servertest.Env
	domain string
	token  string
}

// newBookstore starts a server (with opts), deploys the bookstore schema
// and creates one instance.
func newBookstore(t *testing.T, opts ...servertest.Option) *client {
	t.Helper()
	env := servertest.Start(t, opts...)
	env.PutRelease("bookstore", "v1", bookstoreSDL(t))
	token := env.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{})
	return &client{t: t, env: env, domain: "books.test", token: token}
}

// newApp starts a server, publishes sdl as release v1 of app and creates
// the instance domain of it, answering the instance token's client.
func newApp(t *testing.T, app, domain, sdl string) *client {
	t.Helper()
	env := servertest.Start(t)
	env.PutRelease(app, "v1", sdl)
	return &client{t: t, env: env, domain: domain, token: env.CreateInstance(domain, app, "v1", tenant.Settings{})}
}

// do runs a document and returns the status and the whole body.
func (c *client) do(query string, vars map[string]any) (int, map[string]any) {
	c.t.Helper()
	return c.env.GraphQL(c.domain, c.token, query, vars)
}

// data runs a document that must succeed and returns its data.
func (c *client) data(query string, vars map[string]any) map[string]any {
	c.t.Helper()
	status, body := c.do(query, vars)
	if status != 200 || body["errors"] != nil {
		c.t.Fatalf("query failed: status %d, body %s\nquery: %s", status, dump(body), query)
	}
	d, _ := body["data"].(map[string]any)
	return d
}

// fail runs a document that must fail and returns the first error's
// message and code.
func (c *client) fail(query string, vars map[string]any) (status int, message, code string) {
	c.t.Helper()
	status, body := c.do(query, vars)
	if errs, _ := body["errors"].([]any); len(errs) == 0 {
		c.t.Fatalf("query succeeded, want an error: %s\nquery: %s", dump(body), query)
	}
	message, code = servertest.FirstError(body)
	return status, message, code
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// path walks a decoded JSON value: string keys index objects, ints lists.
func path(v any, steps ...any) any {
	for _, s := range steps {
		switch s := s.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[s]
		case int:
			l, _ := v.([]any)
			if s < 0 || s >= len(l) {
				return nil
			}
			v = l[s]
		}
	}
	return v
}

// twoServers starts two servers on one store, as two processes share a
// database: on MongoDB a store handle each, on bolt one file.
func twoServers(t *testing.T) (a, b *servertest.Env) {
	t.Helper()
	if servertest.Kind() == servertest.KindMongo {
		stores := mongotest.Shared(t, 2)
		return servertest.Start(t, servertest.WithStore(stores[0])), servertest.Start(t, servertest.WithStore(stores[1]))
	}
	a = servertest.Start(t)
	return a, servertest.Start(t, servertest.WithStore(a.Store))
}
