package keyring

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseRefusesMalformedFiles(t *testing.T) {
	t.Parallel()
	good := Generate()
	key := `{"id":"a1","created":"2025-01-01T00:00:00Z","secret":"` + strings.Repeat("A", 43) + `="}`
	for name, tc := range map[string]struct{ data, want string }{
		"not JSON":         {"secret", "not a JSON key ring"},
		"empty":            {"", "not a JSON key ring"},
		"other format":     {`{"format":"x","active":"a1","keys":[` + key + `]}`, `format is "x"`},
		"no keys":          {`{"format":"core-keyring-1","active":"a1","keys":[]}`, "it holds 0 keys"},
		"missing active":   {`{"format":"core-keyring-1","active":"b2","keys":[` + key + `]}`, `the active key "b2" is not among its keys`},
		"short secret":     {`{"format":"core-keyring-1","active":"a1","keys":[{"id":"a1","secret":"AAAA"}]}`, "key a1 has 3 bytes, want 32"},
		"bad id":           {`{"format":"core-keyring-1","active":"a.1","keys":[{"id":"a.1","secret":"AAAA"}]}`, `key id "a.1"`},
		"twice":            {`{"format":"core-keyring-1","active":"a1","keys":[` + key + `,` + key + `]}`, "key id a1 appears twice"},
		"unknown field":    {`{"format":"core-keyring-1","active":"a1","keys":[` + key + `],"x":1}`, "unknown field"},
		"trailing data":    {string(good.Marshal()) + "{}", "data after the key ring"},
		"secret not bytes": {`{"format":"core-keyring-1","active":"a1","keys":[{"id":"a1","secret":"***"}]}`, "not a JSON key ring"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.data))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: %v; want ErrInvalid saying %q", err, tc.want)
			}
		})
	}
	back, err := Parse(good.Marshal())
	if err != nil || back.Active() != good.Active() || string(back.Marshal()) != string(good.Marshal()) {
		t.Errorf("a generated ring does not read back: %v", err)
	}
}

func TestReadFileRefusesOpenPermissions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "core.keys")
	if err := CreateFile(path, Generate()); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("a created key file has mode %04o, want 0600", info.Mode().Perm())
	}
	if err := CreateFile(path, Generate()); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("creating over an existing key file: %v", err)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o660, 0o666, 0o602} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), "readable by its owner only") {
			t.Errorf("mode %04o: %v; want a refusal", mode, err)
		}
	}
	for _, mode := range []os.FileMode{0o600, 0o400} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(path); err != nil {
			t.Errorf("mode %04o: %v", mode, err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, ErrNoFile) {
		t.Errorf("a missing file: %v; want ErrNoFile", err)
	}
}

func TestRotateAndRetire(t *testing.T) {
	t.Parallel()
	r1 := Generate()
	r2, k2, err := r1.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if r2.Active() != k2.ID || len(r2.Keys()) != 2 || len(r1.Keys()) != 1 {
		t.Fatalf("rotate: active %s, %d keys (the old ring %d)", r2.Active(), len(r2.Keys()), len(r1.Keys()))
	}
	staged, k3, err := r2.Add()
	if err != nil || staged.Active() != k2.ID || len(staged.Keys()) != 3 {
		t.Fatalf("add: active %s, %d keys, %v; want the active key kept", staged.Active(), len(staged.Keys()), err)
	}
	if act, err := staged.Activate(k3.ID); err != nil || act.Active() != k3.ID || staged.Active() != k2.ID {
		t.Errorf("activate: %v, %v", act, err)
	}
	if _, err := staged.Activate("nope"); err == nil {
		t.Error("activating an unknown key succeeded")
	}
	if _, err := r2.Retire(k2.ID); err == nil || !strings.Contains(err.Error(), "is the active key") {
		t.Errorf("retiring the active key: %v", err)
	}
	if _, err := r2.Retire("nope"); err == nil || !strings.Contains(err.Error(), `no key "nope"`) {
		t.Errorf("retiring an unknown key: %v", err)
	}
	r3, err := r2.Retire(r1.Active())
	if err != nil || len(r3.Keys()) != 1 || r3.Keys()[0].ID != k2.ID {
		t.Fatalf("retire: %v %v", r3, err)
	}
	// Derived keys differ per label and per key, and stay the same for a
	// key across rings.
	s1, s2 := r2.Derive(LabelSessions), r2.Derive(LabelSecrets)
	if string(s1[k2.ID]) == string(s2[k2.ID]) || string(s1[k2.ID]) == string(s1[r1.Active()]) || string(s1[k2.ID]) == string(k2.Secret) {
		t.Error("sub-keys are not distinct")
	}
	if string(r3.Derive(LabelSessions)[k2.ID]) != string(s1[k2.ID]) {
		t.Error("a key's sub-key changed with the ring")
	}
}

func TestSealer(t *testing.T) {
	t.Parallel()
	r1 := Generate()
	r2, _, _ := r1.Rotate()
	old := r1.Sealer().Seal([]byte("whsec_example"), "instance:A\x00env")
	if !IsSealed(old) || strings.Contains(old, "whsec") {
		t.Fatalf("sealed value %q", old)
	}
	plain, current, err := r2.Sealer().Open(old, "instance:A\x00env")
	if err != nil || string(plain) != "whsec_example" || current {
		t.Errorf("opening with the rotated ring: %q %v %v; want the value, not current", plain, current, err)
	}
	fresh := r2.Sealer().Seal([]byte("v"), "instance:A\x00env")
	if _, current, err := r2.Sealer().Open(fresh, "instance:A\x00env"); err != nil || !current {
		t.Errorf("opening a value of the active key: current %v, %v", current, err)
	}
	r3, _ := r2.Retire(r1.Active())
	for name, tc := range map[string]struct {
		s       *Sealer
		v, aad  string
		wantErr string
	}{
		"another instance": {r2.Sealer(), old, "instance:B\x00env", "does not open it here"},
		"retired key":      {r3.Sealer(), old, "instance:A\x00env", "which the key ring does not hold"},
		"changed":          {r2.Sealer(), old[:len(old)-2] + "AA", "instance:A\x00env", "does not open it here"},
		"clear text":       {r2.Sealer(), "whsec_example", "instance:A\x00env", "not a sealed value"},
		"another ring":     {Generate().Sealer(), fresh, "instance:A\x00env", "which the key ring does not hold"},
	} {
		if _, _, err := tc.s.Open(tc.v, tc.aad); !errors.Is(err, ErrUnsealable) || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: %v; want ErrUnsealable saying %q", name, err, tc.wantErr)
		}
	}
}

func TestKeeperReloadsTheFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "core.keys")
	r1 := Generate()
	if err := CreateFile(path, r1); err != nil {
		t.Fatal(err)
	}
	k, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := k.Reload(); changed || err != nil {
		t.Errorf("reload of an unchanged file: %v %v", changed, err)
	}
	r2, _, _ := r1.Rotate()
	if err := WriteFile(path, r2); err != nil {
		t.Fatal(err)
	}
	if changed, err := k.Reload(); !changed || err != nil || k.Ring().Active() != r2.Active() {
		t.Errorf("reload after a rotation: %v %v, active %s want %s", changed, err, k.Ring().Active(), r2.Active())
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, err := k.Reload(); changed || !errors.Is(err, ErrInvalid) || k.Ring().Active() != r2.Active() {
		t.Errorf("reload of a broken file: %v %v; want an error and the ring kept", changed, err)
	}
}
