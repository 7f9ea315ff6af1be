package rest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/corehq/core/internal/golden"
	"github.com/corehq/core/tenant"
)

// TestOpenAPI fetches the instance's OpenAPI document, validates it with
// libopenapi-validator against the OpenAPI 3.1 schema, pins it in
// testdata/rest/openapi.golden.json, and checks that real requests and
// their answers (the service description's samples) are what it
// describes.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	c := newBookstore(t, tenant.Settings{})

	if status, body := c.env.Do("GET", "/rest/v1/openapi.json", map[string]string{tenant.Header: c.domain}, nil); status != 401 {
		t.Errorf("openapi.json without a token: %d %s, want 401", status, dump(body))
	}
	res, raw := c.env.DoRaw("GET", "/rest/v1/openapi.json", c.headers(), nil)
	if res.StatusCode != 200 || res.Header.Get("content-type") != "application/json" {
		t.Fatalf("openapi.json: %d %s\n%s", res.StatusCode, res.Header.Get("content-type"), raw)
	}
	// A large answer goes whole, with its length, not in chunks.
	if res.ContentLength != int64(len(raw)) || len(res.TransferEncoding) > 0 {
		t.Errorf("openapi.json (%d bytes): Content-Length %d, Transfer-Encoding %v; want the length, no chunks", len(raw), res.ContentLength, res.TransferEncoding)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteString("\n")
	golden.Check(t, filepath.Join("..", "testdata", "rest", "openapi.golden.json"), pretty.String())

	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		t.Fatalf("libopenapi cannot read the document: %v", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("building the validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("%s: %s", e.Message, e.Reason)
			for _, s := range e.SchemaValidationErrors {
				t.Errorf("  at %s: %s", s.FieldPath, s.Reason)
			}
		}
		t.Fatal("the document is not valid OpenAPI 3.1")
	}

	// Real requests and answers match the document.
	q := url.QueryEscape
	for _, r := range []struct {
		method, path string
		noToken      bool
		body         any
		status       int
	}{
		{method: "POST", path: "/", status: 200, body: map[string]any{"values": map[string]any{"Book": []any{
			map[string]any{"core": map[string]any{"id": "Book1"}, "title": "Wise and Otherwise", "authorid": 1, "price": 5.99, "tags": []any{"essays"}, "meta": map[string]any{"isbn": "978"}},
			map[string]any{"core": map[string]any{"id": "Book2"}, "title": "Gitanjali", "price": 10, "published": "1910-01-01T00:00:00Z"},
		}}}},
		{method: "PUT", path: "/", status: 200, body: map[string]any{"values": map[string]any{"Author": map[string]any{"core": map[string]any{"id": "Author1"},
			"name": "Sudha Murty", "age": 70, "bestbook": map[string]any{"core": map[string]any{"id": "Book1"}}, "booklist": []any{map[string]any{"core": map[string]any{"id": "Book2"}}}}}}},
		{method: "GET", path: "/Author/Author1", status: 200},
		{method: "GET", path: "/Author/Author9", status: 404},
		{method: "GET", path: "/Book?arcql=" + q("price > 1") + "&first=1", status: 200},
		{method: "GET", path: "/Book", status: 200},
		{method: "GET", path: "/aggregate/Book?where=" + q("price > 1") + "&distinct=true", status: 200},
		{method: "GET", path: "/aggregate/Book?groupBy=authorid:DESC&groupBy=published:YEARS&first=5", status: 200},
		{method: "GET", path: "/URL", status: 200},
		{method: "GET", path: "/fn/query/find?type=Author&arcql=*&first=2", status: 200},
		{method: "GET", path: "/fn/query/get?type=Book&id=Book1", status: 200},
		{method: "POST", path: "/fn/query/get", body: map[string]any{"type": "Book", "id": "Book9"}, status: 200},
		{method: "POST", path: "/fn/mutation/upsert", status: 200, body: map[string]any{"values": map[string]any{"Book": []any{map[string]any{"title": "Inferno"}}}}},
		{method: "POST", path: "/fn/mutation/createAccount", status: 200, body: map[string]any{"value": map[string]any{"username": "ada", "password": map[string]any{"value": "correct horse battery"}}}},
		{method: "GET", path: "/fn/query/login?username=ada&password=" + q("correct horse battery") + "&type=query", noToken: true, status: 200},
		{method: "POST", path: "/login", noToken: true, body: map[string]any{"username": "ada", "password": "wrong horse battery"}, status: 401},
		{method: "DELETE", path: "/Book/Book2", status: 409},
		{method: "DELETE", path: "/Book/Book2?clearArrayReferences=true", status: 200},
		{method: "DELETE", path: "/Book?arcql=*&clearArrayReferences=true", status: 200},
	} {
		h := c.headers()
		if r.noToken {
			delete(h, "authorization")
		}
		var reqBody []byte
		if r.body != nil {
			reqBody, _ = json.Marshal(r.body)
		}
		res, out := c.env.DoRaw(r.method, "/rest/v1"+r.path, h, r.body)
		if res.StatusCode != r.status {
			t.Errorf("%s %s: %d, want %d: %s", r.method, r.path, res.StatusCode, r.status, out)
			continue
		}
		req, err := http.NewRequest(r.method, "http://core.test/rest/v1"+r.path, bytes.NewReader(reqBody))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range h {
			req.Header.Set(k, v)
		}
		if r.body != nil {
			req.Header.Set("content-type", "application/json")
		}
		res.Body = io.NopCloser(bytes.NewReader(out))
		res.Request = req
		if ok, verrs := v.ValidateHttpRequestResponse(req, res); !ok {
			var b strings.Builder
			for _, e := range verrs {
				b.WriteString("\n  " + e.Message + ": " + e.Reason)
				for _, s := range e.SchemaValidationErrors {
					b.WriteString("\n    at " + s.FieldPath + ": " + s.Reason)
				}
			}
			t.Errorf("%s %s does not match the document:%s\nanswer: %s", r.method, r.path, b.String(), out)
		}
	}
}
