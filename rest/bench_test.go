package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/rest"
	"github.com/corehq/core/tenant"
)

// benchBookstore is a server whose instance holds 1,000 books.
func benchBookstore(b *testing.B) *client {
	b.Helper()
	c := newBookstore(b, tenant.Settings{})
	for start := 1; start <= 1000; start += 500 {
		var books []any
		for j := start; j < start+500; j++ {
			books = append(books, map[string]any{"core": map[string]any{"id": fmt.Sprintf("b%05d", j)}, "title": fmt.Sprintf("Book %d", j),
				"authorid": (j-1)%100 + 1, "price": float64((j*7919)%10000) / 100})
		}
		if status, body := c.do("POST", "/", map[string]any{"values": map[string]any{"Book": books}}); status != 200 {
			b.Fatalf("seeding: %d %s", status, dump(body))
		}
	}
	return c
}

// benchRequests are the two requests the REST overhead is measured on.
var benchRequests = []struct {
	name  string
	route rest.Route
	path  string
	req   rest.Request
}{
	{"get", rest.RouteRecord, "/rest/v1/Book/b00500", rest.Request{Method: "GET", Route: rest.RouteRecord, Aggregate: "Book", ID: "b00500", Query: url.Values{}}},
	{"find25", rest.RouteType, "/rest/v1/Book?arcql=" + url.QueryEscape("price > 50") + "&first=25",
		rest.Request{Method: "GET", Route: rest.RouteType, Aggregate: "Book", Query: url.Values{"arcql": {"price > 50"}, "first": {"25"}}}},
}

// compiled returns the bench instance and its compiled schema.
func (c *client) compiled(b *testing.B) (*tenant.Instance, *gql.Schema) {
	inst, _ := c.env.Directory.Lookup(c.domain)
	s, err := c.env.Engine.Schema(inst.Release())
	if err != nil {
		b.Fatalf("no compiled schema: %v", err)
	}
	return inst, s
}

// BenchmarkRewrite measures the REST → GraphQL rewrite alone.
func BenchmarkRewrite(b *testing.B) {
	c := benchBookstore(b)
	_, s := c.compiled(b)
	api := rest.NewAPI(s)
	for _, br := range benchRequests {
		b.Run(br.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rest.Rewrite(api, br.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOverhead measures what REST adds on top of GraphQL for the same
// work: the executor called directly with the rewritten request (run), the
// whole HTTP request to /graphql with that request (graphql), and the
// whole HTTP request to /rest/v1 (rest), both served in process by the
// real handler. REST's overhead is rest − graphql.
func BenchmarkOverhead(b *testing.B) {
	c := benchBookstore(b)
	inst, s := c.compiled(b)
	api := rest.NewAPI(s)
	env := gql.Env{Store: c.env.Store, Accounts: c.env.Accounts, Instance: inst, Release: inst.Release(), Schema: s,
		Principal: auth.Principal{Kind: auth.InstanceAdmin, AccountID: inst.AdminAccountID}}
	h := c.env.Server.Handler()
	serve := func(b *testing.B, method, path string, body []byte) {
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		req.Header.Set(tenant.Header, c.domain)
		req.Header.Set("authorization", c.token)
		if body != nil {
			req.Header.Set("content-type", "application/json")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
	}
	for _, br := range benchRequests {
		p, err := rest.Rewrite(api, br.req)
		if err != nil {
			b.Fatal(err)
		}
		gqlBody, err := json.Marshal(p.GraphQL)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(br.name+"/run", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res := s.Run(context.Background(), env, nil, p.GraphQL)
				if len(res.Errors) > 0 {
					b.Fatal(res.Errors)
				}
				res.Release()
			}
		})
		b.Run(br.name+"/graphql", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				serve(b, "POST", "/graphql", gqlBody)
			}
		})
		b.Run(br.name+"/rest", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				serve(b, "GET", br.path, nil)
			}
		})
	}
}

// BenchmarkOverheadCreate measures a create, POST / with one new book,
// as BenchmarkOverhead does a read: the executor called directly with the
// rewritten request (run), the whole HTTP request to /graphql with it
// (graphql), and the whole HTTP request to /rest/v1 (rest). Each
// iteration creates a book of its own title.
func BenchmarkOverheadCreate(b *testing.B) {
	c := benchBookstore(b)
	inst, s := c.compiled(b)
	api := rest.NewAPI(s)
	env := gql.Env{Store: c.env.Store, Accounts: c.env.Accounts, Instance: inst, Release: inst.Release(), Schema: s,
		Principal: auth.Principal{Kind: auth.InstanceAdmin, AccountID: inst.AdminAccountID}}
	h := c.env.Server.Handler()
	book := func(i int) map[string]any {
		return map[string]any{"title": fmt.Sprintf("bench book %d", i), "authorid": 42, "price": 17}
	}
	p, err := rest.Rewrite(api, rest.Request{Method: "POST", Route: rest.RouteRecords,
		Body: map[string]any{"values": map[string]any{"Book": []any{book(0)}}}})
	if err != nil {
		b.Fatal(err)
	}
	query, err := json.Marshal(p.GraphQL.Query)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	b.Run("run", func(b *testing.B) {
		values := p.GraphQL.Variables["values"].(map[string]any)
		b.ReportAllocs()
		for b.Loop() {
			n++
			values["Book"] = []any{book(n)}
			res := s.Run(context.Background(), env, nil, p.GraphQL)
			if len(res.Errors) > 0 {
				b.Fatal(res.Errors)
			}
			res.Release()
		}
	})
	// body is the JSON of a request's body creating book n, the title
	// written in by hand so that the benchmark allocates little of its
	// own.
	body := func(buf []byte, prefix string, n int, suffix string) []byte {
		buf = append(buf[:0], prefix...)
		buf = strconv.AppendInt(buf, int64(n), 10)
		return append(buf, suffix...)
	}
	serve := func(b *testing.B, path string, body []byte) {
		req := httptest.NewRequest("POST", path, bytes.NewReader(body))
		req.Header.Set(tenant.Header, c.domain)
		req.Header.Set("authorization", c.token)
		req.Header.Set("content-type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"id"`)) {
			b.Fatalf("POST %s: %d %s", path, rec.Code, rec.Body)
		}
	}
	b.Run("graphql", func(b *testing.B) {
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			n++
			buf = body(buf, `{"query":`+string(query)+`,"variables":{"values":{"Book":[{"title":"bench book `,
				n, `","authorid":42,"price":17}]}}}`)
			serve(b, "/graphql", buf)
		}
	})
	b.Run("rest", func(b *testing.B) {
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			n++
			buf = body(buf, `{"values":{"Book":[{"title":"bench book `, n, `","authorid":42,"price":17}]}}`)
			serve(b, "/rest/v1", buf)
		}
	})
}
