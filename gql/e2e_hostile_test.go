package gql_test

import (
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// heapBytes is the live heap, as runtime/metrics reads it.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestHostileCorpus sends the shapes of request that once pinned a core
// for minutes or grew the process by gigabytes, each far under the body
// limit, to the real server: each is answered 4xx, the heap stays under
// a bound throughout, and another instance is served normally all the
// while. It asserts outcomes and memory, never time. Not parallel: the
// heap is the process's.
func TestHostileCorpus(t *testing.T) {
	c := newBookstore(t)
	c.books("x1", "x2")
	c.env.CreateInstance("quiet.test", "bookstore", "v1", tenant.Settings{})
	quiet := &client{t: t, env: c.env, domain: "quiet.test", token: c.env.CreateInstance("other.test", "bookstore", "v1", tenant.Settings{})}
	quiet.domain = "other.test"

	fragments := "query { ...F0 }\n"
	for i := range 40 {
		fragments += fmt.Sprintf("fragment F%d on Query { ...F%d ...F%d }\n", i, i+1, i+1)
	}
	fragments += "fragment F40 on Query { __typename }"
	aliases := "{"
	for i := range 1000 {
		aliases += fmt.Sprintf(" a%d: find(type: Book, arcql: \"*\", first: 1000) { edges { cursor } }", i)
	}
	aliases += " }"
	// gql answers the HTTP status, or for a field error (GraphQL answers
	// 200 with errors) the status of the error's code.
	gql := func(doc string, vars map[string]any) func() int {
		return func() int {
			status, body := c.do(doc, vars)
			if _, code := servertest.FirstError(body); status == http.StatusOK && code != "" {
				return errcode.Code(code).Status()
			}
			return status
		}
	}
	raw := func(method, path, body string, headers map[string]string) func() int {
		return func() int {
			h := map[string]string{tenant.Header: c.domain, "authorization": c.token, "content-type": "application/json"}
			for k, v := range headers {
				h[k] = v
			}
			res, _ := c.env.DoRaw(method, path, h, body)
			return res.StatusCode
		}
	}
	admin := func(method, path string, body any) func() int {
		return func() int { status, _ := c.env.Admin(method, path, body); return status }
	}
	corpus := []struct {
		name string
		send func() int
	}{
		{"24,000 nested selection sets", gql(strings.Repeat("{a", 24_000), nil)},
		{"a deeply nested list literal", gql(`{ find(type: Book, arcql: "*", first: `+strings.Repeat("[", 20_000)+strings.Repeat("]", 20_000)+`) { edges { cursor } } }`, nil)},
		{"20,000 directives", gql("{ __typename"+strings.Repeat(" @skip(if: false)", 3_500)+" }", nil)},
		{"exponential fragment spreads", gql(fragments, nil)},
		{"a fragment cycle", gql("query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }", nil)},
		{"1,000 aliases of an expensive field", gql(aliases, nil)},
		// hostile checklist 28: 1 MB of nested selection sets, and { nesting in the variables.
		{"1 MB of nested selection sets", raw("POST", "/graphql", `{"query":"`+strings.Repeat("{a", 500_000)+`"}`, nil)},
		{"160,000 nested { in variables", raw("POST", "/graphql", `{"query":"query($v: Json) { __typename }","variables":{"v":`+strings.Repeat(`{"a":`, 160_000)+"1"+strings.Repeat("}", 160_000)+`}}`, nil)},
		{"1 MB of [ in variables", raw("POST", "/graphql", `{"query":"query($v: Int) { __typename }","variables":{"v":`+strings.Repeat("[", 900_000)+`}}`, nil)},
		{"100,000 NOTs in ArcQL", gql(`query($q: String!) { find(type: Book, arcql: $q) { edges { cursor } } }`, map[string]any{"q": strings.Repeat("NOT ", 100_000) + "price > 1"})},
		{"((((… in ArcQL", gql(`query($q: String!) { find(type: Book, arcql: $q) { edges { cursor } } }`, map[string]any{"q": strings.Repeat("(", 3_000) + "price > 1"})},
		{"unbalanced quotes in ArcQL", gql(`query($q: String!) { find(type: Book, arcql: $q) { edges { cursor } } }`, map[string]any{"q": `title = "` + strings.Repeat(`\"`, 1_000)})},
		{"((((… in a REST query string", raw("GET", "/rest/v1/Book?arcql="+url.QueryEscape(strings.Repeat("(", 3_000)+"price > 1"), "", nil)},
		{"NOTs in a REST query string", raw("GET", "/rest/v1/Book?arcql="+url.QueryEscape(strings.Repeat("NOT ", 1_000)+"price > 1"), "", nil)},
		{"an SDL of 10,000 types", admin("PUT", "/apps/hostile/releases/v1", map[string]any{"schema": manyTypes(10_000)})},
		{"an SDL with a 1,000-deep list type", admin("PUT", "/apps/hostile/releases/v2", map[string]any{"schema": "type T { a: " + strings.Repeat("[", 1_000) + "Int" + strings.Repeat("]", 1_000) + " }"})},
	}

	// Another instance is served all the while.
	var stop atomic.Bool
	var served, failed atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			status, body := quiet.env.GraphQL(quiet.domain, quiet.token, `{ find(type: Book, arcql: "*") { edges { cursor } } }`, nil)
			if status == http.StatusOK && body["errors"] == nil {
				served.Add(1)
			} else {
				failed.Add(1)
			}
		}
	}()

	const heapBound = 512 << 20
	runtime.GC()
	base := heapBytes()
	for _, tc := range corpus {
		began := time.Now()
		status := tc.send()
		t.Logf("%s: HTTP %d in %v (measured, not asserted)", tc.name, status, time.Since(began).Round(time.Millisecond))
		if status < 400 || status > 499 {
			t.Errorf("%s: HTTP %d, want 4xx", tc.name, status)
		}
		if h := heapBytes(); h > base+heapBound {
			t.Errorf("%s: the live heap grew by %d MiB, more than %d MiB", tc.name, (h-base)>>20, heapBound>>20)
		}
	}
	// Each shape again, concurrently: the answers do not depend on load.
	var conc sync.WaitGroup
	for _, tc := range corpus {
		conc.Add(1)
		go func() {
			defer conc.Done()
			if status := tc.send(); status < 400 || status > 499 {
				t.Errorf("%s, concurrently: HTTP %d, want 4xx", tc.name, status)
			}
		}()
	}
	conc.Wait()
	stop.Store(true)
	wg.Wait()
	if failed.Load() != 0 || served.Load() == 0 {
		t.Errorf("the other instance: %d requests served, %d failed while the corpus ran", served.Load(), failed.Load())
	}
}

// manyTypes is an SDL of n record types.
func manyTypes(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "type T%d { a: Int }\n", i)
	}
	return b.String()
}
