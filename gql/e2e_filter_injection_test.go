package gql_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/corehq/core/tenant"
)

// TestOperatorTextInFilters: MongoDB operators written into ArcQL text
// ($where, $function, $expr, $accumulator, a JSON operator object) and a
// NUL, escaped in the JSON or raw in a REST query string, are refused
// with 400 BAD_FILTER by ArcQL's parser, through GraphQL and REST, on
// the store the server runs on; the same words inside a quoted string are
// plain values that match nothing.
//
// hostile checklist 24: $where, $function, $expr, \u0000 and a raw NUL
// in a filter → 400 from our parser.
func TestOperatorTextInFilters(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.books("one", "two")
	const doc = `query($q: String!) { find(type: Book, arcql: $q) { edges { cursor } } }`
	for _, q := range []string{
		`$where`,
		`$where = 'sleep(1000)'`,
		`{"$where": "sleep(1000)"}`,
		`title = 'x' OR $where`,
		`$function = 1`,
		`{"$function": {"body": "function() { return true }", "args": [], "lang": "js"}}`,
		`$expr`,
		`{"$expr": {"$gt": ["$price", 0]}}`,
		`$accumulator = 1`,
		`title.$where = 'x'`,
		`price > 1 AND {"$gt": ""}`,
		"title = 'a\x00b'",
		"title\x00 = 'a'",
		"\x00",
	} {
		status, body := c.do(doc, map[string]any{"q": q})
		msg, code := firstError(body)
		if status != 200 || code != "BAD_FILTER" || path(body, "data", "find") != nil {
			t.Errorf("arcql %q: %d %s %q, want BAD_FILTER and no records", q, status, code, msg)
		}
		res, raw := c.env.DoRaw("GET", "/rest/v1/Book?arcql="+url.QueryEscape(q), map[string]string{tenant.Header: c.domain, "authorization": c.token}, nil)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), "BAD_FILTER") {
			t.Errorf("REST arcql %q: %d %s, want 400 BAD_FILTER", q, res.StatusCode, raw)
		}
	}
	// The same words as values are values: they match nothing.
	for _, q := range []string{`title = '$where'`, `title = '{"$gt": ""}'`, `title ~ '$expr'`, `title * '$function*'`} {
		d := c.data(doc, map[string]any{"q": q})
		if n := len(path(d, "find", "edges").([]any)); n != 0 {
			t.Errorf("arcql %q: %d records, want none", q, n)
		}
	}
}
