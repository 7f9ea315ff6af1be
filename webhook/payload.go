package webhook

import (
	"net"
	"net/http"
	"strconv"
	"strings"
)

// payload builds the WebhookPayload of a request: its URL parts, headers
// (names lower-cased, repeated values joined with ", "), the raw body as
// text and the method.
func payload(r *http.Request, body []byte) map[string]any {
	query := map[string]any{}
	for k, vs := range r.URL.Query() {
		if len(vs) == 1 {
			query[k] = vs[0]
		} else {
			list := make([]any, len(vs))
			for i, v := range vs {
				list[i] = v
			}
			query[k] = list
		}
	}
	headers := map[string]any{}
	for k, vs := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	host, port := r.Host, 0
	if h, p, err := net.SplitHostPort(r.Host); err == nil {
		host = h
		port, _ = strconv.Atoi(p)
	}
	if port == 0 {
		port = 80
		if r.TLS != nil {
			port = 443
		}
	}
	return map[string]any{
		"url": map[string]any{
			"path":        r.URL.Path,
			"queryParams": query,
			"port":        port,
			"host":        host,
		},
		"headers": headers,
		"body":    string(body),
		"method":  r.Method,
	}
}
