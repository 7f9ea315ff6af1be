package untrusted

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/corehq/core/errcode"
)

// Policy is the Content-Security-Policy of every tenant-controlled
// response. sandbox without tokens makes the document an opaque origin
// that runs no script; default-src 'none' loads nothing but the inline
// styles and data: images a plain page needs; it may not be framed, and
// its forms and base URL go nowhere.
const Policy = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; " +
	"form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// dropped are the headers a tenant's response may not set: each acts on
// the whole origin or host rather than on the one response, or would
// weaken Policy.
var dropped = []string{
	"Service-Worker-Allowed",
	"Clear-Site-Data",
	"Strict-Transport-Security",
	"Alt-Svc",
	"NEL",
	"Report-To",
	"Reporting-Endpoints",
	"Accept-CH",
	"Critical-CH",
	"Refresh",
	"Origin-Agent-Cluster",
	// Policy replaces the tenant's Content-Security-Policy (Set); a
	// report-only one would only send reports to the tenant.
	"Content-Security-Policy-Report-Only",
}

// Headers makes h, the headers of a response whose content a tenant
// controls, safe to serve on the service's origin (see the package
// documentation): it drops the headers that act beyond the response,
// confines Set-Cookie to scope (a URL path such as
// /webhook/{domain}/{name}, as the request named it), and sets Policy and
// nosniff. It returns an error naming the problem when the response
// cannot be served at all (a Location that is not http or https); h is
// then unchanged. Call it after the tenant's headers are in h and before
// the status is written.
func Headers(h http.Header, scope string) error {
	if loc := h.Values("Location"); len(loc) > 0 {
		if len(loc) > 1 {
			return fmt.Errorf("header \"Location\" is given %d times", len(loc))
		}
		if err := checkRedirect(loc[0]); err != nil {
			return err
		}
	}
	for _, name := range dropped {
		h.Del(name)
	}
	if links := h.Values("Link"); len(links) > 0 {
		h.Del("Link")
		for _, l := range links {
			if !strings.Contains(strings.ToLower(l), "serviceworker") {
				h.Add("Link", l)
			}
		}
	}
	if cookies := h.Values("Set-Cookie"); len(cookies) > 0 {
		h.Del("Set-Cookie")
		for _, c := range cookies {
			if kept, ok := confine(c, scope); ok {
				h.Add("Set-Cookie", kept)
			}
		}
	}
	Sandbox(h)
	return nil
}

// Sandbox sets Policy and nosniff on h: all a response needs whose body a
// tenant controls but whose headers the service writes (a blob of the
// image registry: the bytes are whatever was pushed, the headers are the
// registry's). The document is then an opaque origin that runs no script,
// and its body is never read as another type than the one declared.
func Sandbox(h http.Header) {
	h.Set("Content-Security-Policy", Policy)
	h.Set("X-Content-Type-Options", "nosniff")
}

// checkRedirect reports whether a Location may be followed from the
// service's origin: an http or https URL, or a reference relative to the
// response's (which a browser resolves to http or https). Browsers strip
// leading and trailing spaces and control characters, and drop tabs and
// line breaks anywhere, before reading a URL's scheme ("java\tscript:"
// is javascript:), so a value holding any of them is refused rather than
// read differently from the browser.
func checkRedirect(loc string) error {
	for i := 0; i < len(loc); i++ {
		if loc[i] < ' ' || loc[i] == 0x7f {
			return fmt.Errorf("header \"Location\" holds a control character: a redirect must be a plain http or https URL")
		}
	}
	if loc != strings.TrimSpace(loc) {
		return fmt.Errorf("header \"Location\" starts or ends with a space: a redirect must be a plain http or https URL")
	}
	u, err := url.Parse(loc)
	if err != nil {
		return fmt.Errorf("header \"Location\" is not a URL: a redirect must be an http or https URL")
	}
	switch strings.ToLower(u.Scheme) {
	case "", "http", "https":
		return nil
	}
	return fmt.Errorf("header \"Location\" has the scheme %q: a redirect must be an http or https URL", u.Scheme)
}

// confine returns a Set-Cookie value that reaches no path outside scope
// and no other host, or false when the cookie is dropped.
func confine(line, scope string) (string, bool) {
	c, err := http.ParseSetCookie(line)
	if err != nil || strings.HasPrefix(c.Name, "__Host-") || !validPath(scope) {
		return "", false
	}
	c.Domain = ""
	if c.Path != scope && !strings.HasPrefix(c.Path, strings.TrimSuffix(scope, "/")+"/") {
		c.Path = scope
	}
	if !validPath(c.Path) {
		return "", false
	}
	c.Raw, c.Unparsed = "", nil
	return c.String(), true
}

// validPath reports whether p can be a cookie's Path as is: no ';' and
// no control characters (net/http would drop them, and log that it did).
func validPath(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] == 0x7f || p[i] == ';' {
			return false
		}
	}
	return p != ""
}

// CheckRequest refuses a request for a service worker's script: a
// browser registering a worker fetches its script with Service-Worker:
// script (and Sec-Fetch-Dest: serviceworker). A tenant's response is
// never one, so no worker of the service's origin can run tenant code.
func CheckRequest(r *http.Request) error {
	if r.Header.Get("Service-Worker") != "" || strings.EqualFold(r.Header.Get("Sec-Fetch-Dest"), "serviceworker") {
		return errcode.New(errcode.Forbidden, "this response is a tenant's content and cannot be a service worker's script")
	}
	return nil
}
