// Package testfiles reads the repository's testdata/ folder from any
// package's tests, wherever go test runs them.
package testfiles

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Path is the path of a file under the repository's testdata/ folder,
// named by its parts (Path("e2e", "bookstore.graphql")).
func Path(parts ...string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(file), "..", "..", "testdata"}, parts...)...)
}

// Read returns the text of a file under testdata/; a missing file fails
// the test.
func Read(tb testing.TB, parts ...string) string {
	tb.Helper()
	b, err := os.ReadFile(Path(parts...))
	if err != nil {
		tb.Fatalf("testfiles: %v", err)
	}
	return string(b)
}
