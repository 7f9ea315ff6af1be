package webhook

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/gql"
	"github.com/corehq/core/untrusted"
)

// hopByHop are headers that belong to one connection, never passed on.
var hopByHop = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-authenticate": true, "proxy-authorization": true,
	"te": true, "trailer": true, "transfer-encoding": true, "upgrade": true, "content-length": true,
}

// writeResponse turns a WebhookResponse into the HTTP response, with the
// headers of tenant content (untrusted.Headers). When the response is
// unusable (gql.CheckWebhookResponse, or a redirect that is not http or
// https) it writes nothing and returns the error naming the problem.
func writeResponse(c echo.Context, res map[string]any) error {
	if err := gql.CheckWebhookResponse(res); err != nil {
		return err
	}
	status := http.StatusOK
	if s, ok := res["status"].(float64); ok {
		status = int(s)
	} else if s, ok := res["status"].(int); ok {
		status = s
	}
	var body []byte
	contentType := ""
	switch b := res["body"].(type) {
	case nil:
	case string:
		body, contentType = []byte(b), "text/plain; charset=utf-8"
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return fmt.Errorf("body: %w", err)
		}
		body, contentType = enc, "application/json"
	}
	// The function's headers are gathered apart and made safe for the
	// service's origin (untrusted.Headers) before any reaches the
	// response: a refused one leaves nothing behind in the error answer.
	h := http.Header{}
	hs, _ := res["headers"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(hs)) {
		if !hopByHop[strings.ToLower(name)] {
			h.Set(name, hs[name].(string)) // CheckWebhookResponse: strings only
		}
	}
	if contentType != "" && h.Get("content-type") == "" {
		h.Set("content-type", contentType)
	}
	if err := untrusted.Headers(h, c.Request().URL.EscapedPath()); err != nil {
		return fmt.Errorf("%s%w", gql.UnusableResponse, err)
	}
	out := c.Response().Header()
	for name, values := range h {
		out[name] = values
	}
	c.Response().WriteHeader(status)
	_, _ = c.Response().Write(body) // a client that went away is no fault of the function
	return nil
}
