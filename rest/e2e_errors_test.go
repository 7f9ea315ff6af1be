package rest_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/server"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestErrors checks the headers and the errors envelope of DESIGN.md
// through the real server: statuses, codes and messages.
func TestErrors(t *testing.T) {
	t.Parallel()
	c := newBookstore(t, tenant.Settings{})
	run(t, c, []step{{name: "seed", method: "POST", path: "/", status: 200,
		body: map[string]any{"values": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "Book1"}, "title": "Inferno", "authorid": 1, "price": 9}}},
		want: data("upsert", []any{meta("Book1", true)})}})
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		headers map[string]string
		body    any
		status  int
		want    map[string]any
	}{
		{"no core-domain", "GET", "/Book", map[string]string{tenant.Header: ""}, nil, 400, failure("BAD_REQUEST", "core-domain header is required")},
		{"unknown domain", "GET", "/Book", map[string]string{tenant.Header: "nowhere.test"}, nil, 404,
			failure("UNKNOWN_DOMAIN", `unknown domain "nowhere.test": no instance serves it`)},
		{"a wrong token", "GET", "/Book", map[string]string{"authorization": "not-the-token"}, nil, 401, failure("UNAUTHENTICATED", "invalid token")},
		{"a bearer token", "GET", "/Book?first=1", map[string]string{"authorization": "Bearer " + c.token}, nil, 200,
			pageOf(onePage(1), book("Book1", "Inferno", 1, 9))},
		{"an unknown aggregate", "GET", "/Nope", nil, nil, 404, failure("UNKNOWN_TYPE", `unknown record type "Nope": this schema has no such type`)},
		{"an unknown aggregate to delete", "DELETE", "/Nope?arcql=*", nil, nil, 404, failure("UNKNOWN_TYPE", `unknown record type "Nope": this schema has no such type`)},
		{"an unknown type in upsert", "POST", "/", nil, map[string]any{"values": map[string]any{"Nope": []any{}}}, 404,
			failure("UNKNOWN_TYPE", `unknown record type "Nope": this schema has no such type`)},
		{"malformed JSON", "POST", "/", nil, `{"values": {"Book": [}`, 400,
			failure("BAD_REQUEST", "the body is not valid JSON: malformed JSON at byte 21: invalid character '}' looking for beginning of value")},
		{"a duplicate key", "POST", "/", nil, `{"values": {"Book": {"title": "a"}}, "values": {}}`, 400,
			failure("BAD_REQUEST", `the body is not valid JSON: duplicate key "values" at byte 37`)},
		{"an array body", "PUT", "/", nil, `[]`, 400, failure("BAD_REQUEST", "the body must be a JSON object, not an array")},
		{"trailing data", "POST", "/login", nil, `{"username": "a", "password": "b"}x`, 400,
			failure("BAD_REQUEST", "the body is not valid JSON: more data after the JSON value at byte 34")},
		{"an input GraphQL refuses", "POST", "/", nil, map[string]any{"values": map[string]any{"Book": map[string]any{"price": "cheap"}}}, 400, nil},
		{"an unknown parameter", "GET", "/Book?size=2", nil, nil, 400,
			failure("BAD_REQUEST", `unknown parameter "size"; this route takes after, arcql, before, first, includeTrashed, last, page`)},
		{"a bad Int", "GET", "/Book?first=two", nil, nil, 400,
			failure("BAD_REQUEST", "parameter first must be an Int (a whole number from -2147483648 to 2147483647)")},
		{"first over the maximum", "GET", "/Book?first=1001", nil, nil, 400, nil},
		{"a bad filter", "GET", "/Book?arcql=" + url.QueryEscape("price >"), nil, nil, 400, nil},
		{"a mutation by GET", "GET", "/fn/mutation/upsert?values=%7B%7D", nil, nil, 400,
			failure("BAD_REQUEST", "mutation upsert changes data: call it with POST or PUT")},
		{"an unknown function", "GET", "/fn/query/nope", nil, nil, 404, failure("NOT_FOUND", `query has no function "nope"`)},
		{"first=0", "GET", "/fn/query/find?type=Book&arcql=*&first=0", nil, nil, 400,
			failure("BAD_REQUEST", "page size 0 is out of range: it must be between 1 and 1000")},
		{"a wrong method", "PATCH", "/Book", nil, map[string]any{}, 405, failure("METHOD_NOT_ALLOWED", "method PATCH is not allowed on /rest/v1/Book")},
		{"fn without a function reads as a type", "GET", "/fn/query", nil, nil, 404, failure("UNKNOWN_TYPE", `unknown record type "fn": this schema has no such type`)},
		{"a slash in an id", "GET", "/Book/a/b", nil, nil, 404, failure("NOT_FOUND", `Book "a/b" not found`)},
		// Hostile values are values: a filter that does not parse, an id
		// that names no record, a user that does not exist.
		{"hostile arcql", "GET", "/Book?arcql=" + url.QueryEscape(`") { __schema { types { name } } }`), nil, nil, 400,
			failure("BAD_FILTER", "arcql: 1:1: unterminated string")},
		{"hostile arcql of a delete", "DELETE", "/Book?arcql=" + url.QueryEscape(`{"$gt":""}`), nil, nil, 400, nil},
		{"hostile id", "GET", "/Book/" + url.PathEscape(`{"$gt":""}`), nil, nil, 404, failure("NOT_FOUND", `Book "{\"$gt\":\"\"}" not found`)},
		{"hostile id of a delete", "DELETE", "/Book/" + url.PathEscape(`' OR core.id != '`), nil, nil, 200, data("delete", float64(0))},
		{"hostile id in GraphQL syntax", "GET", "/Book/" + url.PathEscape(`") { __schema { types { name } } }`), nil, nil, 404,
			failure("NOT_FOUND", `Book "\") { __schema { types { name } } }" not found`)},
		{"hostile cursor", "GET", "/Book?after=" + url.QueryEscape(`{"$gt":""}`), nil, nil, 400, failure("BAD_REQUEST", "cursor names no record of type Book")},
		{"hostile type", "GET", "/fn/query/find?arcql=*&type=" + url.QueryEscape(`Book) { __typename } #`), nil, nil, 404,
			failure("UNKNOWN_TYPE", `parameter type: "Book) { __typename } #" is not a record type of this schema`)},
		{"hostile login", "GET", "/fn/query/login?type=query&username=" + url.QueryEscape(`{"$gt":""}`) + "&password=" + url.QueryEscape(`") { __schema { types { name } } } # a password`),
			map[string]string{"authorization": ""}, nil, 401,
			data("login", map[string]any{"core": nil, "sessionToken": nil, "sessionExpires": nil, "errorCode": "INVALID_CREDENTIALS", "errorMsg": "invalid username or password"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := c.headers()
			for k, v := range tc.headers {
				h[k] = v
			}
			status, body := c.env.Do(tc.method, "/rest/v1"+tc.path, h, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, dump(body))
			}
			if tc.want == nil {
				// Only the shape: one error with a code of the status, or data.
				if status >= 400 {
					errs, _ := body["errors"].([]any)
					if len(errs) == 0 || body["data"] != nil {
						t.Errorf("not an errors envelope: %s", dump(body))
					}
				}
				return
			}
			if diff := cmp.Diff(tc.want, normalize(body)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Nothing hostile matched the book.
	run(t, c, []step{{name: "the book is there", method: "GET", path: "/Book/Book1", status: 200, want: pageOf(onePage(25), book("Book1", "Inferno", 1, 9))}})
}

// TestBodyLimit: a body over the server's limit is 413, whether its
// length is declared or not.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	c := newBookstore(t, tenant.Settings{}, servertest.WithConfig(func(cfg *server.Config) { cfg.BodyLimit = 4096 }))
	big := `{"values": {"Book": {"title": "` + strings.Repeat("x", 5000) + `"}}}`
	want := failure("TOO_LARGE", "request body is larger than the limit of 4096 bytes")
	status, body := c.do("POST", "/", big)
	if status != 413 || cmp.Diff(want, body) != "" {
		t.Errorf("declared length: %d %s", status, dump(body))
	}
	// No Content-Length: the body is cut while it is read.
	req, err := http.NewRequest("PUT", c.env.URL+"/rest/v1/", io.MultiReader(strings.NewReader(big)))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range c.headers() {
		req.Header.Set(k, v)
	}
	res, err := c.env.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 413 || req.ContentLength != 0 {
		t.Errorf("streamed body: status %d (content length %d), want 413", res.StatusCode, req.ContentLength)
	}
}
