package door_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/server/door"
)

func TestWriteError(t *testing.T) {
	t.Parallel()
	limited := errcode.New(errcode.RateLimited, "slow down")
	limited.Extensions = map[string]any{"retryAfter": 3}
	for _, tc := range []struct {
		name       string
		err        error
		status     int
		retryAfter string
		want       errcode.Envelope
	}{
		{"a coded error", errcode.New(errcode.BadRequest, "query is required"), 400, "",
			errcode.Envelope{Errors: []errcode.Item{{Message: "query is required", Extensions: map[string]any{"code": "BAD_REQUEST"}}}}},
		{"a wait", limited, 429, "3",
			errcode.Envelope{Errors: []errcode.Item{{Message: "slow down", Extensions: map[string]any{"code": "RATE_LIMITED", "retryAfter": 3.0}}}}},
		{"no code", context.Canceled, 500, "",
			errcode.Envelope{Errors: []errcode.Item{{Message: "internal error", Extensions: map[string]any{"code": "INTERNAL"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			c := echo.New().NewContext(httptest.NewRequest(http.MethodPost, "/graphql", nil), rec)
			if err := door.WriteError(c, tc.err); err != nil {
				t.Fatal(err)
			}
			if rec.Code != tc.status || rec.Header().Get("Retry-After") != tc.retryAfter {
				t.Errorf("status %d, Retry-After %q; want %d, %q", rec.Code, rec.Header().Get("Retry-After"), tc.status, tc.retryAfter)
			}
			var got errcode.Envelope
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteJSON: an encoded body goes with its length, not chunked.
func TestWriteJSON(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/rest/v1/Book", nil), rec)
	body := []byte(`{"data":{}}` + "\n")
	if err := door.WriteJSON(c, http.StatusCreated, body); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusCreated || rec.Header().Get("Content-Length") != "12" ||
		rec.Header().Get("Content-Type") != "application/json" || rec.Body.String() != string(body) {
		t.Errorf("%d %v %q", rec.Code, rec.Header(), rec.Body)
	}
}
