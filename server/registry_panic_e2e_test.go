package server_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/corehq/core/oci"
	"github.com/corehq/core/server/servertest"
)

// TestRegistryPanicIsRecovered: the image registry's paths (/v2/) are
// outside the body limit and the request time-out, not outside panic
// recovery: a handler panicking under /v2/ answers 500, is logged once
// with its request id, and the registry keeps serving.
//
// hostile checklist 45: a panic inside the OCI registry handler →
// recovered and logged with the request id; the process keeps serving.
func TestRegistryPanicIsRecovered(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.InfoLevel)
	env := servertest.Start(t, servertest.WithImages(oci.DefaultConfig(), nil), servertest.WithLogger(zap.New(core)),
		servertest.WithRoutes(func(e *echo.Echo) {
			e.GET("/v2/panic/manifests/latest", func(c echo.Context) error { panic("kaboom in the registry") })
		}))
	res, _ := env.DoRaw("GET", "/v2/panic/manifests/latest", nil, nil)
	if res.StatusCode != http.StatusInternalServerError {
		t.Errorf("a panic under /v2/: %d, want 500", res.StatusCode)
	}
	panics := logs.FilterMessage("panic").All()
	if len(panics) != 1 || panics[0].ContextMap()["request_id"] != res.Header.Get("X-Request-Id") || res.Header.Get("X-Request-Id") == "" {
		t.Errorf("panic log entries %v, want one with the request id %q", panics, res.Header.Get("X-Request-Id"))
	}
	// The registry still answers (401: no credentials).
	if res, _ := env.DoRaw("GET", "/v2/", nil, nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the registry after the panic: %d, want 401", res.StatusCode)
	}
}
