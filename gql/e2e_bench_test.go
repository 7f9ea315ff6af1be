package gql_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/corehq/core/gql"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// Benchmarks of whole /graphql requests through the server's handler (its
// middleware chain, the request decoding, the answer written), without a
// network: what a request costs the server beyond the executor.

func BenchmarkHTTPGet(b *testing.B) {
	benchHTTP(b, false, `query($id: String!) { get(type: Book, id: $id) { ... on Book { title authorid price core { id created updated } } } }`,
		map[string]any{"id": "b00500"})
}

func BenchmarkHTTPGetReference(b *testing.B) {
	benchHTTP(b, true, `query($id: String!) { get(type: Book, id: $id) { ... on Book { title authorid price core { id created updated } } } }`,
		map[string]any{"id": "b00500"})
}

const httpFind25 = `query($q: String!) { find(type: Book, arcql: $q, first: 25) { edges { cursor node { ... on Book { title authorid price core { id created updated } } } }
	pageInfo { hasNextPage endCursor pageLimit } } }`

func BenchmarkHTTPFind25(b *testing.B) {
	benchHTTP(b, false, httpFind25, map[string]any{"q": "price > 50"})
}

func BenchmarkHTTPFind25Reference(b *testing.B) {
	benchHTTP(b, true, httpFind25, map[string]any{"q": "price > 50"})
}

func benchHTTP(b *testing.B, reference bool, query string, vars map[string]any) {
	env := servertest.Start(b)
	env.PutRelease("bookstore", "v1", bookstoreSDL(b))
	token := env.CreateInstance("bench.test", "bookstore", "v1", tenant.Settings{})
	c := &client{t: b, env: env, domain: "bench.test", token: token}
	for start := 1; start <= 1000; start += 500 {
		var books []any
		for j := start; j < start+500; j++ {
			books = append(books, map[string]any{"core": map[string]any{"id": fmt.Sprintf("b%05d", j)}, "title": fmt.Sprintf("Book %d", j),
				"authorid": (j-1)%1000 + 1, "price": float64((j*7919)%10000) / 100})
		}
		c.data(upsertDoc, map[string]any{"v": map[string]any{"Book": books}})
	}
	if reference {
		inst, _ := env.Directory.Lookup("bench.test")
		s, err := env.Engine.Schema(inst.Release())
		if err != nil {
			b.Fatal(err)
		}
		gql.UseReferenceOnly(s)
	}
	benchGraphQL(b, env.Server.Handler(), "bench.test", token, query, vars, "")
}

// benchGraphQL measures POST /graphql of a document through the server's
// handler b.N times, after one run that must succeed (and hold want),
// reporting the server's CPU per request.
func benchGraphQL(b *testing.B, h http.Handler, domain, token, query string, vars map[string]any, want string) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	do := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("content-type", "application/json")
		req.Header.Set("core-domain", domain)
		req.Header.Set("authorization", token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := do(); rec.Code != 200 || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) || !bytes.Contains(rec.Body.Bytes(), []byte(want)) {
		b.Fatalf("%d %s (want it to hold %q)", rec.Code, rec.Body, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := gql.CPUTime()
	for range b.N {
		do()
	}
	b.ReportMetric(float64(gql.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
}
