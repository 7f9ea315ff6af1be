package webhook

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/corehq/core/untrusted"
)

func TestWriteResponse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		res         map[string]any
		wantErr     bool
		wantStatus  int
		wantBody    string
		wantHeaders map[string]string
	}{
		{"defaults", map[string]any{}, false, 200, "", nil},
		{"string body as is", map[string]any{"status": float64(201), "body": "<ok/>"}, false, 201, "<ok/>", map[string]string{"Content-Type": "text/plain; charset=utf-8"}},
		{"json body", map[string]any{"body": map[string]any{"ok": true}}, false, 200, `{"ok":true}`, map[string]string{"Content-Type": "application/json"}},
		{"own content type", map[string]any{"headers": map[string]any{"Content-Type": "application/xml"}, "body": "<a/>"}, false, 200, "<a/>", map[string]string{"Content-Type": "application/xml"}},
		{"redirect", map[string]any{"status": float64(302), "headers": map[string]any{"Location": "https://example.com/"}}, false, 302, "", map[string]string{"Location": "https://example.com/"}},
		{"hop-by-hop dropped", map[string]any{"headers": map[string]any{"Connection": "close", "X-Ok": "1"}}, false, 200, "", map[string]string{"Connection": "", "X-Ok": "1"}},
		{"status out of range", map[string]any{"status": float64(700)}, true, 0, "", nil},
		// hostile checklist 41: statuses 0, 99 and 1000 are refused too.
		{"status 0", map[string]any{"status": float64(0)}, true, 0, "", nil},
		{"status 99", map[string]any{"status": float64(99)}, true, 0, "", nil},
		{"status 1000", map[string]any{"status": float64(1000)}, true, 0, "", nil},
		{"status not a number", map[string]any{"status": "200"}, true, 0, "", nil},
		{"header injection", map[string]any{"headers": map[string]any{"X-A": "1\r\nSet-Cookie: x=1"}}, true, 0, "", nil},
		{"bad header name", map[string]any{"headers": map[string]any{"X A": "1"}}, true, 0, "", nil},
		{"headers not an object", map[string]any{"headers": "x"}, true, 0, "", nil},
		{"status not an integer", map[string]any{"status": float64(200.5)}, true, 0, "", nil},
		{"header value a number", map[string]any{"headers": map[string]any{"X-A": "1", "X-N": float64(1)}}, true, 0, "", nil},
		{"header value null", map[string]any{"headers": map[string]any{"X-N": nil}}, true, 0, "", nil},
		// hostile checklist 41 and 51: the response is tenant content on
		// the service's origin (untrusted.Headers).
		{"sandboxed", map[string]any{"headers": map[string]any{"Content-Type": "text/html", "Content-Security-Policy": "script-src *"}, "body": "<script>alert(1)</script>"},
			false, 200, "<script>alert(1)</script>", map[string]string{"Content-Type": "text/html", "Content-Security-Policy": untrusted.Policy, "X-Content-Type-Options": "nosniff"}},
		{"worker scope dropped", map[string]any{"headers": map[string]any{"Service-Worker-Allowed": "/", "Clear-Site-Data": `"*"`, "X-Ok": "1"}},
			false, 200, "", map[string]string{"Service-Worker-Allowed": "", "Clear-Site-Data": "", "X-Ok": "1"}},
		{"cookie confined", map[string]any{"headers": map[string]any{"Set-Cookie": "sid=1; Path=/; Domain=example.com"}},
			false, 200, "", map[string]string{"Set-Cookie": "sid=1; Path=/webhook/d/n"}},
		{"javascript redirect", map[string]any{"status": float64(302), "headers": map[string]any{"Location": "javascript:alert(1)", "X-A": "1"}}, true, 0, "", nil},
		{"data redirect", map[string]any{"status": float64(302), "headers": map[string]any{"Location": "data:text/html,x", "X-A": "1"}}, true, 0, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c := echo.New().NewContext(httptest.NewRequest(http.MethodPost, "/webhook/d/n", nil), rec)
			err := writeResponse(c, tc.res)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				if rec.Body.Len() != 0 || len(rec.Header()) != 0 {
					t.Error("an unusable response wrote something")
				}
				return
			}
			if rec.Code != tc.wantStatus || rec.Body.String() != tc.wantBody {
				t.Errorf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tc.wantStatus, tc.wantBody)
			}
			for k, v := range tc.wantHeaders {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestPayload(t *testing.T) {
	t.Parallel()
	body := `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "boom">]><x>&e;</x>`
	r := httptest.NewRequest(http.MethodPut, "http://hooks.example.com:8443/webhook/d/n?a=1&b=2&b=3", strings.NewReader(body))
	r.Header.Set("X-Sig", "abc")
	r.Header.Add("X-Many", "1")
	r.Header.Add("X-Many", "2")
	got := payload(r, []byte(body))
	want := map[string]any{
		"url":     map[string]any{"path": "/webhook/d/n", "queryParams": map[string]any{"a": "1", "b": []any{"2", "3"}}, "port": 8443, "host": "hooks.example.com"},
		"headers": map[string]any{"x-sig": "abc", "x-many": "1, 2"},
		"body":    body,
		"method":  "PUT",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
}
