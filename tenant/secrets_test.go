package tenant_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/keyring"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/tenant"
)

// TestEnvIsSealedInTheStore: an instance's env values are stored only
// sealed, open again on a directory with the same keys (and on none with
// other keys), cannot be moved to another instance, and values an older
// version stored in clear are sealed by Reseal. Hostile checklist 13: a
// copy of the store holds no secret in clear.
func TestEnvIsSealedInTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := bolttest.Open(t)
	r1 := keyring.Generate()
	keys := keyring.Hold(r1)
	reg := tenant.NewDirectory(st, tenant.WithSealer(keys))
	if err := reg.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.PutRelease(ctx, "shop", "v1", "", `type Book { title: String }`); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"STRIPE_SECRET": "whsec_distinctive_value_1"}
	_, _, err := reg.CreateInstance(ctx, tenant.InstanceSpec{Domain: "a.test", App: "shop", Release: "v1", Settings: tenant.Settings{Env: env}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.CreateInstance(ctx, tenant.InstanceSpec{Domain: "b.test", App: "shop", Release: "v1",
		Settings: tenant.Settings{Env: map[string]string{"OTHER": "x"}}}); err != nil {
		t.Fatal(err)
	}
	docs, err := st.ListDocs(ctx, "instance")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(docs["a.test"]), "whsec_distinctive_value_1") || strings.Contains(string(docs["a.test"]), "STRIPE_SECRET") {
		t.Fatalf("the stored instance holds its env in clear: %s", docs["a.test"])
	}

	// The same keys open it again.
	again := tenant.NewDirectory(st, tenant.WithSealer(keys))
	if err := again.Load(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := again.Lookup("a.test")
	if diff := cmp.Diff(env, got.Settings.Env); diff != "" {
		t.Errorf("env after a load (-want +got):\n%s", diff)
	}
	// Other keys do not, and the load says which key is missing.
	if err := tenant.NewDirectory(st, tenant.WithSealer(keyring.Hold(keyring.Generate()))).Load(ctx); err == nil ||
		!strings.Contains(err.Error(), "restore the key file") || !strings.Contains(err.Error(), r1.Active()) {
		t.Errorf("a load with other keys: %v; want an error naming the key", err)
	}

	// A's sealed env moved into B's document does not open there.
	var da, db map[string]any
	_ = json.Unmarshal(docs["a.test"], &da)
	_ = json.Unmarshal(docs["b.test"], &db)
	db["sealedEnv"] = da["sealedEnv"]
	swapped, _ := json.Marshal(db)
	if err := st.PutDoc(ctx, "instance", "b.test", swapped); err != nil {
		t.Fatal(err)
	}
	if err := tenant.NewDirectory(st, tenant.WithSealer(keys)).Load(ctx); err == nil || !strings.Contains(err.Error(), "b.test") {
		t.Errorf("a load with A's env in B's document: %v; want an error naming b.test", err)
	}

	// An older version's document, env in clear: Reseal seals it, and a
	// rotation makes it seal the others again under the new key.
	db["sealedEnv"] = nil
	db["settings"].(map[string]any)["env"] = map[string]any{"OTHER": "clear_value_of_an_older_version"}
	old, _ := json.Marshal(db)
	if err := st.PutDoc(ctx, "instance", "b.test", old); err != nil {
		t.Fatal(err)
	}
	reg = tenant.NewDirectory(st, tenant.WithSealer(keys))
	if err := reg.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := reg.Reseal(ctx); n != 1 || err != nil {
		t.Errorf("reseal of one clear env: %d, %v", n, err)
	}
	raw, _ := st.GetDoc(ctx, "instance", "b.test")
	if strings.Contains(string(raw), "clear_value_of_an_older_version") {
		t.Errorf("after Reseal the env is still in clear: %s", raw)
	}
	r2, _, _ := r1.Rotate()
	rotated := keyring.Hold(r2)
	reg = tenant.NewDirectory(st, tenant.WithSealer(rotated))
	if err := reg.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := reg.Reseal(ctx); n != 2 || err != nil {
		t.Errorf("reseal after a rotation: %d, %v; want both instances", n, err)
	}
	r3, _ := r2.Retire(r1.Active())
	final := tenant.NewDirectory(st, tenant.WithSealer(keyring.Hold(r3)))
	if err := final.Load(ctx); err != nil {
		t.Fatalf("a load after the old key was retired: %v", err)
	}
	b, _ := final.Lookup("b.test")
	if diff := cmp.Diff(map[string]string{"OTHER": "clear_value_of_an_older_version"}, b.Settings.Env); diff != "" {
		t.Errorf("env of the migrated instance (-want +got):\n%s", diff)
	}
}
