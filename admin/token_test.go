package admin_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/corehq/core/admin"
	"github.com/corehq/core/auth"
	"github.com/corehq/core/store/bolt"
)

func TestSetupToken(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "core.db")
	st, err := bolt.Open(path, bolt.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// First start without a token: one is generated, its hash stored.
	hash, generated, err := admin.SetupToken(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(generated) < 40 || !auth.TokenMatches(generated, hash) {
		t.Fatalf("generated %q does not match its hash", generated)
	}
	raw, err := st.GetDoc(ctx, "service", "admin-token")
	if err != nil {
		t.Fatalf("the hash is not stored: %v", err)
	}
	if strings.Contains(string(raw), generated) {
		t.Error("the stored document holds the token itself")
	}

	// Next start: the same token, nothing shown.
	again, shown, err := admin.SetupToken(ctx, st, "")
	if err != nil || shown != "" || again != hash {
		t.Errorf("second start: shown %q, same hash %v, err %v; want nothing shown and the same hash", shown, again == hash, err)
	}

	// A given token wins and is not stored.
	given := "operator-chosen-token-123"
	h, shown, err := admin.SetupToken(ctx, st, given)
	if err != nil || shown != "" || h != auth.HashToken(given) {
		t.Errorf("given token: shown %q, err %v", shown, err)
	}
	if raw2, _ := st.GetDoc(ctx, "service", "admin-token"); string(raw2) != string(raw) {
		t.Error("a given token replaced the stored hash")
	}

	if _, _, err := admin.SetupToken(ctx, st, "short"); err == nil {
		t.Error("a 5-character admin token was accepted")
	}
}
