// Package server assembles the HTTP server of cored: one echo instance with
// the cross-cutting middleware (request id, one log line per request,
// panic recovery, body limit), the errcode envelope for every failure
// (echo's own 404/405 included), /healthz and /readyz, and the doors:
// /admin/v1 (admin), /graphql (tenant → auth → gql). Later doors (/rest/v1,
// /webhook/…) are mounted in routes, and so is the web console's
// /console/ (console: static files only, which call the doors above).
// With Config.ConsoleAddr the console moves to a listener of its own
// (ConsoleHandler, ServeConsole), an origin that serves no tenant content:
// the console, the admin API, /graphql and the probes, never webhooks, REST
// or the registry; the main listener then has no /console/.
//
// Serve runs it on a listener until its context ends, then drains the
// requests in flight (http.Server.Shutdown) before returning. Handler
// exposes the same routes for in-process use (tests, --demo seeding).
package server
