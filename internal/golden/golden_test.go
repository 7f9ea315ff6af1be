package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that keeps whether a check failed instead of
// failing the test that runs it (Check calls only the methods below).
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }

// TestCheck: the same text passes, another text fails, a missing file
// fails, and -update writes the file that then passes.
func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, got string
		fail            bool
	}{
		{"the same", path, "a\nb\n", false},
		{"another line", path, "a\nc\n", true},
		{"no file", path + ".missing", "a\nb\n", true},
	} {
		r := &recorder{}
		Check(r, c.path, c.got)
		if r.failed != c.fail {
			t.Errorf("%s: failed = %v, want %v", c.name, r.failed, c.fail)
		}
	}

	*update = true
	defer func() { *update = false }()
	fresh := filepath.Join(t.TempDir(), "new.golden")
	r := &recorder{}
	Check(r, fresh, "x\n")
	if b, err := os.ReadFile(fresh); r.failed || err != nil || string(b) != "x\n" {
		t.Errorf("-update: failed %v, file %q (%v), want it written and passing", r.failed, b, err)
	}
}
