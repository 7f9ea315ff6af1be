// Package webhook receives HTTP requests from external systems and hands
// each, raw, to a function of the instance's schema.
//
// {base}/webhook/{domain}/{name} (any method; a webhook without a name is
// addressed by its id) asks the engine to open the call
// (gql.Engine.OpenWebhook: the instance's Webhook record, its document,
// the session of the account it runs as), builds a
// WebhookPayload — url {path queryParams port host}, headers, body (the
// raw body as text, byte for byte for any UTF-8 body, so a signature over
// it can be checked), method — and runs the field the record's `query`
// names as the record's `as` account, with a session token issued for
// that account for the call. The field's WebhookResponse {status headers
// body} becomes the HTTP response.
//
// Rules:
//   - The instance must allow anonymous requests, else 403 and nothing
//     runs. An unknown domain and an unknown webhook both answer the same
//     404, and nothing runs.
//   - Nothing of the request is parsed into trusted structure: JSON, XML
//     (entities are never expanded: the receiver does not parse it),
//     form-encoded and multipart bodies all reach the function as text.
//     Bodies over the limit (1 MiB by default) answer 413, and so does a
//     body whose encoding as the function's input passes the runtime's
//     input bound (fn.Config.MaxInputBytes). A body with a
//     Content-Encoding other than identity (gzip, deflate, br) answers
//     415 UNSUPPORTED_MEDIA_TYPE before anything runs: bodies are never
//     decompressed, so no compressed body can expand past the limit.
//   - The response status defaults to 200; one that is not an integer
//     from 100 to 599 ("200" and 200.5 included: they are checked as the
//     function answered them, before GraphQL's Int coerces them) answers
//     502 naming the problem. Header values must be strings; names and
//     values are validated (CR or LF refused) and hop-by-hop headers
//     dropped. A string body is sent as is (text/plain
//     unless the function set a content type), any other JSON value
//     encoded as JSON (application/json). 301/302 with Location redirect.
//   - The response is tenant content on the service's origin, where the
//     console keeps the admin token: untrusted.Headers sandboxes it
//     (Content-Security-Policy: sandbox, no script; nosniff), keeps its
//     cookies to /webhook/{domain}/{name}, drops headers that act on the
//     whole origin (Service-Worker-Allowed, Clear-Site-Data, HSTS, …), and
//     a Location that is not http or https answers 502 naming it. A
//     request for a service worker's script (Service-Worker: script)
//     answers 403 and nothing runs (docs/console-and-origins.md).
//   - A failure answers 502 with its class as the code and nothing of the
//     function's message or stack: FUNCTION_ERROR (it threw or answered
//     an error), FUNCTION_NOT_PUBLISHED (the bound version is not
//     published), WEBHOOK_FIELD_MISSING (the field the webhook runs is not
//     in the instance's schema, e.g. after a release swap); a time-out
//     answers 504 TIMEOUT. The details go to the instance's function log
//     (GET /admin/v1/instances/{domain}/logs) and the cause to the server's
//     log line.
//   - query.selection, when set, may list only status, headers and body.
package webhook
