// Package bolttest opens embedded stores for tests: one file in the
// test's temporary directory, closed when the test ends.
package bolttest

import (
	"path/filepath"
	"testing"

	"github.com/corehq/core/store/bolt"
)

// Open opens a fresh store in tb's temporary directory without fsync (a
// test's data need not survive a machine crash); tb.Cleanup closes it and
// reports a failure to close.
func Open(tb testing.TB) *bolt.Store {
	tb.Helper()
	cfg := bolt.DefaultConfig()
	cfg.NoSync = true
	st, err := bolt.Open(filepath.Join(tb.TempDir(), "core.db"), cfg)
	if err != nil {
		tb.Fatalf("bolttest: opening the store: %v", err)
	}
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Errorf("bolttest: closing the store: %v", err)
		}
	})
	return st
}
