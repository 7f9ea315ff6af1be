package untrusted

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/errcode"
)

const scope = "/webhook/shop.test/page"

// hostile checklist 41: Set-Cookie and redirects of a function's
// response; 51: nothing of a tenant's response acts on the origin the
// console's admin token lives in (service workers, storage, cookies).
func TestHeaders(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   http.Header
		want http.Header // besides Policy and nosniff, always set
	}{
		{"plain", http.Header{"Content-Type": {"text/html"}, "X-Ok": {"1"}},
			http.Header{"Content-Type": {"text/html"}, "X-Ok": {"1"}}},
		{"origin-wide headers dropped", http.Header{
			"Service-Worker-Allowed": {"/"}, "Clear-Site-Data": {`"*"`}, "Strict-Transport-Security": {"max-age=63072000; includeSubDomains"},
			"Alt-Svc": {`h2="evil.example:443"`}, "Nel": {`{"report_to":"x","max_age":1}`}, "Report-To": {"{}"},
			"Reporting-Endpoints": {`x="https://evil.example/"`}, "Accept-Ch": {"Sec-CH-UA"}, "Critical-Ch": {"Sec-CH-UA"},
			"Refresh": {"0; url=javascript:alert(1)"}, "Origin-Agent-Cluster": {"?0"},
			"Content-Security-Policy-Report-Only": {"default-src 'none'; report-uri https://evil.example/"},
		}, http.Header{}},
		{"our policy wins over the tenant's", http.Header{"Content-Security-Policy": {"script-src *"}, "X-Content-Type-Options": {"sniff"}},
			http.Header{}},
		{"links kept but a service worker's", http.Header{"Link": {`</next>; rel="next"`, `</webhook/shop.test/sw>; rel="serviceworker"`}},
			http.Header{"Link": {`</next>; rel="next"`}}},
		{"cookie on the whole host confined", http.Header{"Set-Cookie": {"sid=1; Path=/; Domain=example.com; HttpOnly; Secure; SameSite=Lax"}},
			http.Header{"Set-Cookie": {"sid=1; Path=/webhook/shop.test/page; HttpOnly; Secure; SameSite=Lax"}}},
		{"cookie without a path confined", http.Header{"Set-Cookie": {"a=b"}},
			http.Header{"Set-Cookie": {"a=b; Path=/webhook/shop.test/page"}}},
		{"cookie on the console confined", http.Header{"Set-Cookie": {"a=b; Path=/console/"}},
			http.Header{"Set-Cookie": {"a=b; Path=/webhook/shop.test/page"}}},
		{"cookie on a sibling webhook confined", http.Header{"Set-Cookie": {"a=b; Path=/webhook/shop.test/pagex"}},
			http.Header{"Set-Cookie": {"a=b; Path=/webhook/shop.test/page"}}},
		{"cookie within the scope kept", http.Header{"Set-Cookie": {"a=b; Path=/webhook/shop.test/page/deeper; Max-Age=60"}},
			http.Header{"Set-Cookie": {"a=b; Path=/webhook/shop.test/page/deeper; Max-Age=60"}}},
		{"host cookie and a broken one dropped", http.Header{"Set-Cookie": {"__Host-sid=1; Path=/; Secure", "=nameless", "ok=1; Path=" + scope}},
			http.Header{"Set-Cookie": {"ok=1; Path=/webhook/shop.test/page"}}},
		{"http redirect", http.Header{"Location": {"https://example.com/done?x=1"}}, http.Header{"Location": {"https://example.com/done?x=1"}}},
		{"relative redirect", http.Header{"Location": {"../thanks"}}, http.Header{"Location": {"../thanks"}}},
		{"scheme-relative redirect", http.Header{"Location": {"//example.com/x"}}, http.Header{"Location": {"//example.com/x"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := tc.in.Clone()
			if err := Headers(h, scope); err != nil {
				t.Fatal(err)
			}
			want := tc.want.Clone()
			want.Set("Content-Security-Policy", Policy)
			want.Set("X-Content-Type-Options", "nosniff")
			if diff := cmp.Diff(want, h); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

// hostile checklist 41: a redirect to javascript: (or anything but http
// and https) is refused, however it is spelled.
func TestHeadersRefuseRedirects(t *testing.T) {
	t.Parallel()
	for _, loc := range []string{
		"javascript:alert(document.domain)",
		"JavaScript:alert(1)",
		" javascript:alert(1)",
		"java\tscript:alert(1)",
		"\x01javascript:alert(1)",
		"data:text/html,<script>alert(1)</script>",
		"vbscript:msgbox(1)",
		"file:///etc/passwd",
		"blob:https://example.com/x",
		"javascrіpt:alert(1)", // a Cyrillic і: not a scheme, and not a path either
	} {
		h := http.Header{"Location": {loc}, "Set-Cookie": {"a=1"}}
		err := Headers(h, scope)
		if err == nil || !strings.Contains(err.Error(), `"Location"`) {
			t.Errorf("Location %q: err = %v, want an error naming the header", loc, err)
		}
		if h.Get("Content-Security-Policy") != "" || h.Get("Set-Cookie") != "a=1" {
			t.Errorf("Location %q: the refused headers were changed: %v", loc, h)
		}
	}
	if err := Headers(http.Header{"Location": {"/a", "/b"}}, scope); err == nil {
		t.Error("two Locations: no error")
	}
}

// hostile checklist 51: a tenant's response is never a service worker's
// script.
func TestCheckRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		headers map[string]string
		refused bool
	}{
		{"page", map[string]string{"Sec-Fetch-Dest": "document"}, false},
		{"plain", nil, false},
		{"service worker script", map[string]string{"Service-Worker": "script"}, true},
		{"service worker destination", map[string]string{"Sec-Fetch-Dest": "serviceworker"}, true},
	} {
		r := httptest.NewRequest(http.MethodGet, scope, nil)
		for k, v := range tc.headers {
			r.Header.Set(k, v)
		}
		err := CheckRequest(r)
		var e *errcode.Error
		switch {
		case !tc.refused && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.refused && (!errors.As(err, &e) || e.Code != errcode.Forbidden):
			t.Errorf("%s: err = %v, want FORBIDDEN", tc.name, err)
		}
	}
}
