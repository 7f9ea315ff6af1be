package tenant_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/tenant"
)

func TestCORSAllows(t *testing.T) {
	t.Parallel()
	c := tenant.CORS{AllowedOrigins: []string{"https://app.example.com", "http://localhost:3000"}}
	for origin, want := range map[string]bool{
		"https://app.example.com":  true,
		"http://localhost:3000":    true,
		"http://app.example.com":   false, // another scheme is another origin
		"https://app.example.com.": false,
		"https://evil.example":     false,
		"":                         false,
		"null":                     false,
	} {
		if got := c.Allows(origin); got != want {
			t.Errorf("Allows(%q) = %v, want %v", origin, got, want)
		}
	}
	all := tenant.CORS{AllowedOrigins: []string{"*"}}
	if !all.Allows("https://anything.example") || all.Allows("") {
		t.Error(`"*" must allow every origin a browser sends, and no missing one`)
	}
	if (tenant.CORS{}).Allows("https://app.example.com") {
		t.Error("no origins must allow none")
	}
}

// TestCORSSettings: the policy is checked, kept across a reload of the
// directory, and changed by a partial settings patch.
func TestCORSSettings(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.putRelease("v1", bookstoreSDL)
	ctx := context.Background()
	for _, bad := range []string{"app.example.com", "https://app.example.com/", "https://App.example.com", "ftp://x.example", "https://", "https://a.example?x"} {
		_, _, err := h.reg.CreateInstance(ctx, tenant.InstanceSpec{Domain: "bad.test", App: "bookstore", Release: "v1",
			Settings: tenant.Settings{CORS: tenant.CORS{AllowedOrigins: []string{bad}}}})
		if code(err) != errcode.BadRequest {
			t.Errorf("origin %q: error %v, want BAD_REQUEST", bad, err)
		}
	}
	want := tenant.CORS{AllowedOrigins: []string{"https://app.example.com", "http://127.0.0.1:8080"}}
	if _, _, err := h.reg.CreateInstance(ctx, tenant.InstanceSpec{Domain: "a.test", App: "bookstore", Release: "v1",
		Settings: tenant.Settings{CORS: want}}); err != nil {
		t.Fatal(err)
	}
	reloaded := h.loaded()
	inst, _ := reloaded.Lookup("a.test")
	if diff := cmp.Diff(want, inst.Settings.CORS); diff != "" {
		t.Errorf("CORS after a reload (-want +got):\n%s", diff)
	}
	if _, err := reloaded.UpdateInstance(ctx, "a.test", tenant.Change{Settings: []byte(`{"cors": {"allowedOrigins": ["https://a.example/x"]}}`)}); code(err) != errcode.BadRequest {
		t.Errorf("patch to a bad origin: %v, want BAD_REQUEST", err)
	}
	inst, err := reloaded.UpdateInstance(ctx, "a.test", tenant.Change{Settings: []byte(`{"cors": {"allowedOrigins": ["*"]}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"*"}, inst.Settings.CORS.AllowedOrigins); diff != "" {
		t.Errorf("CORS after a patch (-want +got):\n%s", diff)
	}
}
