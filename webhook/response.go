package webhook

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// hopByHop are headers that belong to one connection, never passed on.
var hopByHop = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-authenticate": true, "proxy-authorization": true,
	"te": true, "trailer": true, "transfer-encoding": true, "upgrade": true, "content-length": true,
}

// writeResponse turns a WebhookResponse into the HTTP response. It
// returns an error, and writes nothing, when the response is unusable.
func writeResponse(c echo.Context, res map[string]any) error {
	status := http.StatusOK
	if s, ok := res["status"]; ok && s != nil {
		n, ok := s.(float64)
		if !ok {
			if i, isInt := s.(int); isInt {
				n, ok = float64(i), true
			}
		}
		if !ok || n != float64(int(n)) || n < 100 || n > 599 {
			return fmt.Errorf("webhook: status %v is not an HTTP status", s)
		}
		status = int(n)
	}
	h := c.Response().Header()
	if hs, ok := res["headers"].(map[string]any); ok {
		for name, v := range hs {
			value := fmt.Sprint(v)
			if !validHeaderName(name) || strings.ContainsAny(value, "\r\n\x00") {
				return fmt.Errorf("webhook: header %q is not a valid header", name)
			}
			if hopByHop[strings.ToLower(name)] {
				continue
			}
			h.Set(name, value)
		}
	} else if res["headers"] != nil {
		return fmt.Errorf("webhook: headers must be an object")
	}
	var body []byte
	switch b := res["body"].(type) {
	case nil:
	case string:
		body = []byte(b)
		if h.Get("content-type") == "" {
			h.Set("content-type", "text/plain; charset=utf-8")
		}
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return fmt.Errorf("webhook: body: %w", err)
		}
		body = enc
		if h.Get("content-type") == "" {
			h.Set("content-type", "application/json")
		}
	}
	c.Response().WriteHeader(status)
	_, err := c.Response().Write(body)
	return err
}

// validHeaderName reports whether s is an HTTP token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r >= 0x7f || r <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}
