// Package server assembles the HTTP server of cored: one echo instance with
// the cross-cutting middleware (request id, one log line per request,
// panic recovery, body limit), the errcode envelope for every failure
// (echo's own 404/405 included), /healthz and /readyz, and the doors:
// /admin/v1 (admin), /graphql (gql/transport), /rest/v1 (rest) and
// /webhook/… (webhook), mounted in routes, and the web console's
// /console/ (console: static files only, which call the doors above).
// What the data doors share at the edge (door.Resolve, door.CORS, the
// answer writers) is package server/door, which they import; this
// package imports the doors.
// With Config.ConsoleAddr the console moves to a listener of its own
// (ConsoleHandler, ServeConsole), an origin that serves no tenant content:
// the console, the admin API, /graphql and the probes, never webhooks, REST
// or the registry; the main listener then has no /console/.
//
// Serve runs it on a listener until its context ends, then drains the
// requests in flight (http.Server.Shutdown) before returning. Handler
// exposes the same routes for in-process use (tests, --demo seeding).
package server
