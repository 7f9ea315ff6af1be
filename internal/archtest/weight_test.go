package archtest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// unwanted are the packages cored must not link, by path prefix: each
// came in once through a library's part the service does not use
// (distribution's HTTP layer: its tracing, whose exporters bring gRPC, and
// its redis cache), and together they were a quarter of the binary
// (docs/configuration.md, "The binary").
var unwanted = []string{
	"go.opentelemetry.io/otel/exporters",
	"google.golang.org/grpc",
	"github.com/redis",
}

// TestBinaryWeight reads what cmd/cored links with go list -deps and
// fails for each unwanted package, naming the imports that bring it.
func TestBinaryWeight(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./cmd/cored")
	cmd.Dir, cmd.Env = root, os.Environ()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/cored: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		imports[fields[0]] = fields[1:]
	}
	if len(imports) < 100 {
		t.Fatalf("go list -deps ./cmd/cored named %d packages: the listing is not what this test reads", len(imports))
	}
	chain := importChains(module+"cmd/cored", imports)
	reported := map[string]bool{}
	for pkg := range imports {
		for _, prefix := range unwanted {
			if (pkg == prefix || strings.HasPrefix(pkg, prefix+"/")) && !reported[prefix] {
				reported[prefix] = true
				t.Errorf("cored links %s (%s…), through %s", pkg, prefix, strings.Join(chain(pkg), " → "))
			}
		}
	}
}

// importChains returns a function giving, for each package from imports
// (reached from main), the shortest chain of imports from main to it.
func importChains(main string, imports map[string][]string) func(string) []string {
	from := map[string]string{main: ""}
	queue := []string{main}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, next := range imports[p] {
			if _, seen := from[next]; !seen {
				from[next] = p
				queue = append(queue, next)
			}
		}
	}
	return func(pkg string) []string {
		var chain []string
		for p := pkg; p != ""; p = from[p] {
			chain = append([]string{p}, chain...)
		}
		return chain
	}
}
