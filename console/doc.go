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
// The page runs under a strict policy (no inline script, its own origin
// only, no workers, never framed). It never uses a service worker: on load
// it unregisters any registration of its origin before it reads or asks
// for the token, and a page loaded through one stops there; its files
// refuse to be fetched as a worker's script. Tenant content served on the
// same origin (webhook responses) is sandboxed by package untrusted; the
// console can also have an origin of its own (server.Config.ConsoleAddr,
// cored serve --console-addr). docs/console-and-origins.md says why.
//
// The browser tests run the real server and Debian's chromium through
// playwright-core: browser_e2e_test.go drives e2e/console.mjs (the
// console's features), origin_e2e_test.go drives e2e/origin.mjs (a
// tenant's page cannot reach the token).
package console
