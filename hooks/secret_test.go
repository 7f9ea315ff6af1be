package hooks

import (
	"bytes"
	"testing"

	"github.com/corehq/core/keyring"
	"github.com/corehq/core/store"
)

// TestRehome: an imported hook's secret, sealed for the exporting
// instance, is sealed again for the new one where this server's keys open
// it, and is removed with the hook disabled where they do not.
func TestRehome(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	here, elsewhere := keyring.Hold(keyring.Generate()), keyring.Hold(keyring.Generate())
	hook := func(keys *keyring.Keeper) *store.Record {
		sealed, err := SealSecret(keys, "old", secret)
		if err != nil {
			t.Fatal(err)
		}
		return &store.Record{Type: Type, ID: "h1", Fields: map[string]any{"url": "https://example.com/", "secret": sealed}}
	}
	want, _ := ParseSecret(secret)

	r := hook(here)
	Rehome(here, "old", "new", r)
	if key, err := OpenSecret(here, "new", r.Fields["secret"].(string)); err != nil || !bytes.Equal(key, want) {
		t.Errorf("the secret sealed again opens as %x, %v; want the hook's key", key, err)
	}
	if _, ok := r.Fields["enabled"]; ok {
		t.Errorf("a hook whose secret moved is %v, want it left as it was", r.Fields["enabled"])
	}

	r = hook(elsewhere)
	Rehome(here, "old", "new", r)
	if _, ok := r.Fields["secret"]; ok || r.Fields["enabled"] != false {
		t.Errorf("a secret other keys sealed: %v, want it removed and the hook disabled", r.Fields)
	}

	other := &store.Record{Type: "Note", ID: "n1", Fields: map[string]any{"secret": "kept"}}
	Rehome(here, "old", "new", other)
	if other.Fields["secret"] != "kept" {
		t.Errorf("a Note's field named secret became %v", other.Fields["secret"])
	}
}
