package admin_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/oci"
	"github.com/corehq/core/server/servertest"
)

// TestEveryAdminRouteNeedsTheToken walks every route the server mounts
// under /admin/v1 (the apps, instances, functions and image registry
// parts) and calls it without a token and with a wrong one: each answers
// 401 UNAUTHENTICATED before doing anything.
func TestEveryAdminRouteNeedsTheToken(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t, servertest.WithImages(oci.DefaultConfig(), nil))
	e, ok := env.Server.Handler().(*echo.Echo)
	if !ok {
		t.Fatalf("the server's handler is a %T, not echo", env.Server.Handler())
	}
	param := regexp.MustCompile(`:[a-z]+`)
	walked := 0
	for _, r := range e.Routes() {
		if !strings.HasPrefix(r.Path, "/admin/v1") || r.Method == echo.RouteNotFound {
			continue
		}
		walked++
		path := param.ReplaceAllString(r.Path, "x")
		for _, headers := range []map[string]string{nil, {"authorization": "not-the-admin-token"}} {
			status, body := env.Do(r.Method, path, headers, map[string]any{})
			if status != http.StatusUnauthorized || body["errors"] == nil {
				t.Errorf("%s %s (route %s) with %v: %d %v, want 401", r.Method, path, r.Path, headers, status, body)
			}
		}
	}
	if walked < 20 {
		t.Errorf("walked %d admin routes, want every one (more than 20)", walked)
	}
}
