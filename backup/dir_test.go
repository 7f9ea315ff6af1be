package backup_test

import (
	"context"
	"errors"
	"testing"

	"github.com/corehq/core/backup"
)

// TestDirKeepsTheNewest: backups taken into a folder are listed newest
// first, the oldest beyond the number kept are removed, each opens and
// verifies, and a name that is not a kept backup is ErrNoBackup.
func TestDirKeepsTheNewest(t *testing.T) {
	t.Parallel()
	d, err := backup.NewDir(filled(t), t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	var taken []string
	for range 3 {
		info, err := d.Take(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.Size == 0 || len(info.SHA256) != 64 {
			t.Errorf("Take = %+v", info)
		}
		taken = append(taken, info.Name)
	}
	list, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != taken[2] || list[1].Name != taken[1] {
		t.Fatalf("List = %+v; want the two newest of %v, newest first", list, taken)
	}
	for _, b := range list {
		f, err := d.Open(b.Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := backup.Verify(f, backup.FormatBackup); err != nil {
			t.Errorf("%s: %v", b.Name, err)
		}
		f.Close()
	}
	for _, name := range []string{taken[0], "../core.db", "core.keys"} {
		if _, err := d.Open(name); !errors.Is(err, backup.ErrNoBackup) {
			t.Errorf("Open(%q) = %v, want ErrNoBackup", name, err)
		}
	}
}
