package mongotest

import (
	"os"
	"testing"
	"time"
)

// TestBuild builds the FerretDB test server (or finds it cached). CI runs it
// on its own first, so that the first build's minutes are not spent inside
// another package's test time-out.
func TestBuild(t *testing.T) {
	start := time.Now()
	bin, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatal(err)
	}
	t.Logf("FerretDB test server: %s (%v)", bin, time.Since(start).Round(time.Millisecond))
}
