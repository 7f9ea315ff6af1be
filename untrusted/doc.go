// Package untrusted makes a response whose headers and body a tenant
// controls harmless to the service's own origin: a webhook function's
// answer (webhook/), a blob or manifest of the image registry (oci/),
// later an uploaded file's download.
//
// Such a response is served on the same origin as /console/, /graphql
// and /admin/v1. Passed through unchanged it could act as the service:
// an HTML page whose script reads the console's sessionStorage (the
// admin token) in the same tab, a service worker registered with scope
// "/" that then controls the console and reads the token at sign-in,
// cookies over every path, a redirect to javascript:. Headers and
// CheckRequest take that power away, in one place every door of tenant
// content calls:
//
//   - Content-Security-Policy (Policy) starts with sandbox and no
//     tokens: the document is an opaque origin (no access to the
//     origin's storage, cookies or service workers) and runs no script at
//     all; forms, popups, plugins and top navigation are off too. The
//     rest of the policy loads nothing but inline styles and data:
//     images. Ours replaces any policy the tenant set; a Report-Only one
//     is dropped as well.
//   - X-Content-Type-Options: nosniff, so a body is never read as
//     another type than the one declared.
//   - Headers that act on the whole origin or host are dropped:
//     Service-Worker-Allowed (a worker's scope beyond its own path),
//     Clear-Site-Data, Strict-Transport-Security, Alt-Svc, NEL,
//     Report-To, Reporting-Endpoints, Accept-CH, Critical-CH, Refresh,
//     Origin-Agent-Cluster and a Link naming a service worker.
//   - Set-Cookie is kept within the response's own path (the scope, for a
//     webhook /webhook/{domain}/{name}): a Path outside it is rewritten to
//     the scope, a Domain attribute is removed (host-only cookies), and
//     __Host- cookies, which claim the whole host, are dropped, as is a
//     cookie that cannot be parsed. The service itself uses no cookies
//     (tokens travel in headers), so no name is reserved for it.
//   - Location must be an http or https URL, absolute or relative;
//     anything else (javascript:, data:, vbscript:, file:, …) is an error
//     naming the problem, which the door answers as an unusable response
//     (502 BAD_GATEWAY).
//
// Sandbox sets only Policy and nosniff, for responses whose headers the
// service writes itself and whose body is a tenant's (the image
// registry's blobs and manifests at /v2/).
//
// CheckRequest refuses a request the browser makes for a service worker
// script (Service-Worker: script, Sec-Fetch-Dest: serviceworker): a
// tenant's response can never become a worker of the origin.
package untrusted
