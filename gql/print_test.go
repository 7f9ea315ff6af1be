package gql

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corehq/core/internal/golden"
	"github.com/corehq/core/schema"
)

// TestGeneratedSchemaGolden pins SDL → generated executable schema: every
// built-in root, type and input the API promises, for the end-to-end
// tests' bookstore (testdata/e2e/bookstore.graphql), the schema
// package's interfaces (testdata/schema/interfaces.graphql) and each SDL
// in testdata/gql/*.graphql. The golden file of <name>.graphql is
// testdata/gql/<name>.golden.
func TestGeneratedSchemaGolden(t *testing.T) {
	dir := filepath.Join("..", "testdata", "gql")
	files, err := filepath.Glob(filepath.Join(dir, "*.graphql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	files = append(files, filepath.Join("..", "testdata", "e2e", "bookstore.graphql"), filepath.Join("..", "testdata", "schema", "interfaces.graphql"))
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".graphql")
		t.Run(name, func(t *testing.T) {
			sdl, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			m, err := schema.Parse(string(sdl), schema.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			s, err := Build(m, DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			got := PrintSchema(s.GraphQL())
			golden.Check(t, filepath.Join(dir, name+".golden"), got)
		})
	}
}
