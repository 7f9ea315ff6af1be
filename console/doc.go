// Package console serves the web console at /console/: static files
// (HTML, CSS, ES modules) embedded in the binary, with no build step and
// nothing loaded from another origin at run time.
//
// The console holds no data and grants nothing. Its routes answer only
// the embedded files, the same bytes to everyone; the page then talks to
// the public APIs (/admin/v1 with the admin token the person signs in
// with; /graphql with an instance's admin session, which the admin API
// issues for that token and which acts as the instance token on that
// instance for 15 minutes, so no instance token is ever asked for; and an
// instance's own /webhook/{domain}/… URLs for a webhook's "send test"),
// which check those tokens and rules as they do for any client. The
// tokens live in the tab's sessionStorage, never in a cookie, and never in
// a URL but a file's thumbnail or download link (an <img> sends no
// header), which carries the admin session.
//
// Backups (backups.js) take, list and download the service's backups and
// export and import instances through the admin API; a download is
// fetched with the admin token in a header and handed to the browser as
// a blob, so the token never goes into a URL.
//
// A record's view shows who may see it: the owner, the AccessRight grants
// that cover it (read through /graphql) and its type's @access rules,
// read from the release's SDL (admin API) by a small parser (model.js
// accessRules) that looks only at the type's header; a type without
// rules shows none.
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
// tenant's page cannot reach the token or an admin session),
// backups_e2e_test.go drives e2e/backups.mjs (backups, export, import).
package console
