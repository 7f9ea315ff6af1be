// Package golden holds the rule of the translators' golden tests (the SDL
// → model dump, the model → generated schema, a REST request → GraphQL
// document, ArcQL → MongoDB filter): the output is compared with a file
// under testdata/, and `go test ./<package> -run <Test> -update` rewrites
// the file from the output, for a change that is meant, which then shows
// in the diff of the commit. Only tests import it.
package golden

import (
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files the tests compare with")

// Check compares got with the golden file at path, failing tb with the
// difference; under -update it writes got to path first.
func Check(tb testing.TB, path, got string) {
	tb.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run the test with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		tb.Errorf("%s differs (-want +got); run the test with -update if the change is meant:\n%s", path, diff)
	}
}
