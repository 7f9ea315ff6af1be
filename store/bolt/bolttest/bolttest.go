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
	st := OpenAt(tb, filepath.Join(tb.TempDir(), "core.db"), nil)
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Errorf("bolttest: closing the store: %v", err)
		}
	})
	return st
}

// OpenAt opens the store in the file at path without fsync, its
// configuration changed by change (nil: none). The caller closes it: a
// test that restarts a server closes the store and opens the file again.
func OpenAt(tb testing.TB, path string, change func(*bolt.Config)) *bolt.Store {
	tb.Helper()
	cfg := bolt.DefaultConfig()
	cfg.NoSync = true
	if change != nil {
		change(&cfg)
	}
	st, err := bolt.Open(path, cfg)
	if err != nil {
		tb.Fatalf("bolttest: opening the store: %v", err)
	}
	return st
}
