// Package console serves the web console at /console/: static files
// (HTML, CSS, ES modules) embedded in the binary, with no build step and
// nothing loaded from another origin at run time.
//
// The console holds no data and grants nothing. Its routes answer only
// the embedded files, the same bytes to everyone; the page then talks to
// the public APIs (/admin/v1 with the admin token the person signs in
// with, /graphql and /rest/v1 with an instance's token, and an
// instance's own /webhook/{domain}/… URLs for a webhook's "send test"),
// which check those tokens and rules as they do for any client. The token lives in the tab's
// sessionStorage, never in a URL or a cookie.
//
// The browser test (e2e_test.go, driving e2e/console.mjs) runs the real
// server and Debian's chromium through playwright-core.
package console
