package gql_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/tenant"
)

// TestHostileDomainHeader: hostile core-domain values answer as an
// unknown domain does, on /graphql and /rest/v1: the same status and the
// same body once the quoted domain in the message is put aside (the
// message names the domain it could not find, quoted). A value longer
// than a host name answers as any other overlong domain, naming none.
//
// hostile checklist 3: core-domain ../x, %2e%2e, a b, 10 KB value, NUL
// byte → same 404/400 as any unknown tenant.
func TestHostileDomainHeader(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	const placeholder = "<domain>"
	answer := func(method, target, domain string) (int, any) {
		t.Helper()
		h := map[string]string{tenant.Header: domain, "authorization": c.token}
		var body any
		if method == http.MethodPost {
			body = map[string]any{"query": "{ __typename }"}
		}
		res, raw := c.env.DoRaw(method, target, h, body)
		var got any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s %s with core-domain %.40q: %d, not JSON: %s", method, target, domain, res.StatusCode, raw)
		}
		// The message quotes the domain as Go's %q does, inside JSON.
		if msg, ok := path(got, "errors", 0, "message").(string); ok {
			setMessage(got, strings.ReplaceAll(msg, strconv.Quote(domain), placeholder))
		}
		return res.StatusCode, got
	}
	for _, door := range []struct{ method, path string }{
		{http.MethodPost, "/graphql"},
		{http.MethodGet, "/rest/v1/Book"},
	} {
		t.Run(door.path, func(t *testing.T) {
			wantStatus, want := answer(door.method, door.path, "nowhere.test")
			if wantStatus != 404 || path(want, "errors", 0, "extensions", "code") != "UNKNOWN_DOMAIN" {
				t.Fatalf("an unknown domain: %d %s, want 404 UNKNOWN_DOMAIN", wantStatus, dump(want))
			}
			longStatus, long := answer(door.method, door.path, strings.Repeat("a", 300))
			for _, domain := range []string{"../x", "../../etc/passwd", "%2e%2e", "%2e%2e%2f", "a b", "books.test/../x", "books.test%00", "$where", "nowhere.test:443"} {
				status, got := answer(door.method, door.path, domain)
				if status != wantStatus {
					t.Errorf("core-domain %q: status %d, want %d", domain, status, wantStatus)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("core-domain %q answers unlike an unknown domain (-unknown +got):\n%s", domain, diff)
				}
			}
			for _, domain := range []string{strings.Repeat("x", 10<<10), strings.Repeat("../", 3000), strings.Repeat("a.", 5000)} {
				status, got := answer(door.method, door.path, domain)
				if status != longStatus || status != 404 {
					t.Errorf("a core-domain of %d bytes: status %d, want %d", len(domain), status, longStatus)
				}
				if diff := cmp.Diff(long, got); diff != "" {
					t.Errorf("a core-domain of %d bytes answers unlike another overlong domain (-overlong +got):\n%s", len(domain), diff)
				}
			}
		})
	}

	// A NUL byte: Go's client refuses to send it, so a raw connection
	// does. net/http refuses a NUL in any header value before routing, so
	// the answer is the one a NUL in any other header gets; the value
	// never reaches the directory. The server serves on afterwards.
	raw := func(headers string) (int, string) {
		t.Helper()
		u, _ := url.Parse(c.env.URL)
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatalf("dialing the server: %v", err)
		}
		defer conn.Close()
		body := `{"query":"{ __typename }"}`
		req := "POST /graphql HTTP/1.1\r\nHost: " + u.Host + "\r\n" + headers +
			"authorization: " + c.token + "\r\ncontent-type: application/json\r\ncontent-length: " + strconv.Itoa(len(body)) + "\r\nconnection: close\r\n\r\n" + body
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatalf("writing the request: %v", err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("reading the answer: %v", err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(out)
	}
	if status, body := raw("core-domain: books.test\r\n"); status != 200 || !strings.Contains(body, "Query") {
		t.Fatalf("the raw request with a good domain: %d %s", status, body)
	}
	otherStatus, otherBody := raw("core-domain: books.test\r\nx-other: a\x00b\r\n")
	for _, domain := range []string{"books.test\x00", "\x00", "a\x00../x", "nowhere.test\x00books.test"} {
		status, body := raw("core-domain: " + domain + "\r\n")
		if status != 400 || status != otherStatus || body != otherBody {
			t.Errorf("core-domain %q: %d %q; want 400 as a NUL in another header: %d %q", domain, status, body, otherStatus, otherBody)
		}
	}
	if status, _ := c.do("{ __typename }", nil); status != 200 {
		t.Errorf("the server after the NUL requests: %d", status)
	}
}

// setMessage replaces the message of the first error of an envelope.
func setMessage(v any, msg string) {
	if e, ok := path(v, "errors", 0).(map[string]any); ok {
		e["message"] = msg
	}
}
