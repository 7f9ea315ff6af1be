package gql

import (
	"sync"
	"testing"

	"github.com/corehq/core/internal/testfiles"
	"github.com/corehq/core/schema"
)

// TestConcurrentBuilds builds schemas in parallel, as the instance directory does when
// an evicted release is compiled again while another is uploaded. Every
// schema shares graphql-go's introspection types; under -race this fails
// unless builds take turns (buildMu).
func TestConcurrentBuilds(t *testing.T) {
	sdl := testfiles.Read(t, "e2e", "bookstore.graphql")
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 16 {
		m, err := schema.Parse(sdl, schema.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start // all at once
			if _, err := Build(m, DefaultConfig()); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
}
