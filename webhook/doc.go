// Package webhook receives HTTP requests from external systems and hands
// each, raw, to a function of the instance's schema.
//
// {base}/webhook/{domain}/{name} (any method; a webhook without a name is
// addressed by its id) finds the instance's Webhook record, builds a
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
//     Bodies over the limit (1 MiB by default) answer 413.
//   - The response status defaults to 200; one outside 100–599 answers 502.
//     Header names and values are validated (CR or LF refused) and
//     hop-by-hop headers dropped. A string body is sent as is (text/plain
//     unless the function set a content type), any other JSON value
//     encoded as JSON (application/json). 301/302 with Location redirect.
//   - A function error answers 502, a function time-out 504, each with a
//     generic JSON error: never the function's message or stack.
//   - query.selection, when set, may list only status, headers and body.
package webhook
