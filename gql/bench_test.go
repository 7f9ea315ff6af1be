package gql

import (
	"context"
	"fmt"
	"testing"

	"github.com/corehq/core/auth"
)

// benchEnv builds a compiled bookstore schema over a bolt store holding
// n books, and an Env that acts with the instance token.
func benchEnv(b *testing.B, n int) (*Schema, Env) {
	b.Helper()
	env := emptyBookstore(b, "bench.test")
	s := env.Schema
	for start := 1; start <= n; start += 500 {
		var books []any
		for j := start; j < start+500 && j <= n; j++ {
			books = append(books, map[string]any{"core": map[string]any{"id": fmt.Sprintf("b%05d", j)}, "title": fmt.Sprintf("Book %d", j),
				"authorid": float64((j-1)%1000 + 1), "price": float64((j*7919)%10000) / 100})
		}
		res := s.Do(context.Background(), env, nil, Request{Query: `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
			Variables: map[string]any{"v": map[string]any{"Book": books}}})
		if len(res.Errors) > 0 {
			b.Fatalf("seed: %v", res.Errors)
		}
	}
	return s, env
}

// benchDo measures a request as the /graphql handler serves it: run,
// encoded body, buffer released.
func benchDo(b *testing.B, s *Schema, env Env, req Request) {
	b.Helper()
	ctx := context.Background()
	if res := s.Do(ctx, env, nil, req); len(res.Errors) > 0 {
		b.Fatalf("%v", res.Errors)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		res := s.Run(ctx, env, nil, req)
		if _, err := res.Body(); err != nil {
			b.Fatal(err)
		}
		res.Release()
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkGet is a cached get by id of one book.
func BenchmarkGet(b *testing.B) {
	s, env := benchEnv(b, 1000)
	benchDo(b, s, env, getRequest)
}

// BenchmarkFind25 is a cached find of a 25-record page with a filter.
func BenchmarkFind25(b *testing.B) {
	s, env := benchEnv(b, 1000)
	benchDo(b, s, env, find25Request)
}

// BenchmarkFind25AsUser is BenchmarkFind25 with a user session: the owner
// rule adds a createdBy condition (the records are the user's own).
func BenchmarkFind25AsUser(b *testing.B) {
	s, env := benchEnv(b, 1000)
	env.Principal = auth.Principal{Kind: auth.User, AccountID: "admin", Session: "s"}
	benchDo(b, s, env, find25Request)
}

// BenchmarkLogin is a successful password login: Argon2id with OWASP's
// parameters dominates.
func BenchmarkLogin(b *testing.B) {
	s, env := benchEnv(b, 0)
	res := s.Do(context.Background(), env, nil, Request{
		Query:     `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
		Variables: map[string]any{"v": map[string]any{"username": "bench", "password": map[string]any{"value": "Bench-User-Pass-1"}}},
	})
	if len(res.Errors) > 0 {
		b.Fatal(res.Errors)
	}
	env.Principal = auth.Principal{}
	benchDo(b, s, env, Request{
		Query:     `query($u: String!, $p: String!) { login(username: $u, password: $p) { sessionToken } }`,
		Variables: map[string]any{"u": "bench", "p": "Bench-User-Pass-1"},
	})
}
