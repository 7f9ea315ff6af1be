package rest_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/corehq/core/internal/testfiles"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestMain runs the tests, then fails the run if a token or password
// reached a log line of a test server.
func TestMain(m *testing.M) { servertest.MainCheckingLogs(m) }

// bookstoreSDL is the service description's Author/Book schema (URL is
// built in).
func bookstoreSDL(t testing.TB) string {
	t.Helper()
	b := testfiles.Read(t, "e2e", "bookstore.graphql")
	return b
}

// client talks REST to one instance of a real in-process server.
type client struct {
	t      testing.TB
	env    *servertest.Env
	domain string
	token  string
}

// newBookstore starts a server with the bookstore schema and one
// instance.
func newBookstore(t testing.TB, settings tenant.Settings, opts ...servertest.Option) *client {
	t.Helper()
	env := servertest.Start(t, opts...)
	env.PutRelease("bookstore", "v1", bookstoreSDL(t))
	token := env.CreateInstance("books.test", "bookstore", "v1", settings)
	return &client{t: t, env: env, domain: "books.test", token: token}
}

// headers are the headers of the service description's samples: the
// domain and the token (when there is one).
func (c *client) headers() map[string]string {
	h := map[string]string{tenant.Header: c.domain}
	if c.token != "" {
		h["authorization"] = c.token
	}
	return h
}

// do sends a request under /rest/v1 and decodes the answer.
func (c *client) do(method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	return c.env.Do(method, "/rest/v1"+path, c.headers(), body)
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// Generated values are normalised before comparing: ids the server made
// (ULIDs), timestamps, session tokens and their expiry.
var (
	ulidPattern = regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{26}$`)
	timePattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
)

const (
	anyID    = "<id>"
	anyTime  = "<timestamp>"
	anyToken = "<token>"
	anyUnix  = "<unix seconds>"
)

// normalize replaces generated values in a decoded answer.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			switch {
			case k == "sessionToken" && x != nil:
				out[k] = anyToken
			case k == "sessionExpires" && x != nil:
				out[k] = anyUnix
			default:
				out[k] = normalize(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalize(x)
		}
		return out
	case string:
		switch {
		case ulidPattern.MatchString(v):
			return anyID
		case timePattern.MatchString(v):
			return anyTime
		}
	}
	return v
}

// meta is the flat metadata of an upsert result: created is null for a
// record that existed.
func meta(id string, created bool) map[string]any {
	m := coreOf(id)
	if !created {
		m["created"] = nil
	}
	return m
}

// coreOf is the core metadata of a bookstore record as the test server
// serves it.
func coreOf(id string) map[string]any {
	return map[string]any{
		"id": id, "created": anyTime, "updated": anyTime, "trashed": nil, "createdBy": anyID, "impl": nil,
		"app": "bookstore", "release": "v1", "instance": "books.test",
		"publisherRealm": "main", "publisherApp": "bookstore", "publisherRelease": "v1", "instanceId": anyID,
	}
}

// book is a Book record as REST answers it (tags, published and meta are
// never set by these tests).
func book(id, title string, authorid int, price float64) map[string]any {
	return map[string]any{"core": coreOf(id), "title": title, "authorid": float64(authorid), "price": price,
		"tags": nil, "published": nil, "meta": nil}
}

// author is an Author record as REST answers it: its references expanded
// one level (bestbook a book or nil, booklist books or nil).
func author(id, name string, age int, bestbook any, booklist ...any) map[string]any {
	var list any
	if booklist != nil {
		list = booklist
	}
	return map[string]any{"core": coreOf(id), "name": name, "age": float64(age), "bestbook": bestbook, "booklist": list}
}

// pageOf is the answer of a find: the records as edges (the cursor is the
// record's id) and pageInfo.
func pageOf(info map[string]any, records ...map[string]any) map[string]any {
	edges := []any{}
	for _, r := range records {
		edges = append(edges, map[string]any{"cursor": r["core"].(map[string]any)["id"], "node": r})
	}
	return map[string]any{"data": map[string]any{"find": map[string]any{"edges": edges, "pageInfo": info}}}
}

// onePage is the pageInfo of a page that holds every match.
func onePage(limit int) map[string]any {
	return map[string]any{"hasPreviousPage": false, "hasNextPage": false, "startCursor": "FIRST", "endCursor": "LAST",
		"pageLimit": float64(limit), "previousOffsets": []any{}, "nextOffsets": []any{}}
}

// data is a success answer {"data": {field: v}}.
func data(field string, v any) map[string]any {
	return map[string]any{"data": map[string]any{field: v}}
}

// failure is an error answer with one error.
func failure(code, message string) map[string]any {
	return map[string]any{"errors": []any{map[string]any{"message": message, "extensions": map[string]any{"code": code}}}}
}
