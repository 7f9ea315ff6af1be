package archtest_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is the module path of the repository.
const module = "github.com/corehq/core/"

// doors are the packages that turn HTTP into requests of the engine
// (gql.Engine): /graphql (gql/transport), /rest/v1 (rest) and
// /webhook (webhook). They read and write HTTP only: none imports the
// store (the filter language, store/arcql, is not the store) or another
// door. doorMiddleware, what they share at the HTTP edge (opening a
// request, CORS, the writers of answers), is held to the same rule.
var (
	doors          = []string{"gql/transport", "rest", "webhook", "email", "files"}
	doorMiddleware = []string{"server/door"}
)

// goList runs go list in the repository with args and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir, cmd.Env = root, os.Environ()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.Fields(string(out))
}

// TestDoorsAreThin reads each door's imports with go list: a door (or the
// doors' middleware) that imports the store or a door fails, naming the
// import.
func TestDoorsAreThin(t *testing.T) {
	t.Parallel()
	isDoor := map[string]bool{}
	for _, d := range doors {
		isDoor[module+d] = true
	}
	for _, d := range append(slices.Clone(doors), doorMiddleware...) {
		for _, imp := range goList(t, "-f", `{{join .Imports "\n"}}`, "./"+d) {
			switch {
			case imp == module+"store" || strings.HasPrefix(imp, module+"store/") && imp != module+"store/arcql":
				t.Errorf("door %s imports the store (%s): doors reach records only through the engine", d, imp)
			case isDoor[imp]:
				t.Errorf("door %s imports the door %s", d, imp)
			}
		}
	}
}

// httpLibraries are the libraries that serve HTTP or WebSocket: routers,
// frameworks and WebSocket implementations, by module path.
var httpLibraries = []string{
	"github.com/labstack/echo",
	"github.com/coder/websocket",
	"nhooyr.io/websocket",
	"github.com/gorilla/websocket",
	"golang.org/x/net/websocket",
	"github.com/gorilla/mux",
	"github.com/go-chi/chi",
	"github.com/gin-gonic/gin",
	"github.com/valyala/fasthttp",
	"github.com/gofiber/fiber",
}

// enginePackages are the engine's packages: gql and those below it but the
// door, gql/transport.
func enginePackages(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, p := range goList(t, "./gql/...") {
		if !slices.Contains(doors, strings.TrimPrefix(p, module)) {
			out = append(out, p)
		}
	}
	if !slices.Contains(out, module+"gql") {
		t.Fatalf("go list ./gql/... lists %v, without gql", out)
	}
	return out
}

// TestEngineSpeaksNoHTTP: the engine knows no transport. No package of
// it depends, even through another package, on a library that serves
// HTTP or WebSocket (httpLibraries); and its own files use nothing of
// net/http but the status codes (http.StatusOK, …: a Result carries the
// status its errors map to) — no request, response writer, handler or
// server, and no package below net/http (httptest, httputil, …). Reading
// and writing HTTP is the doors' job (gql/transport, rest, webhook) and
// their middleware's (server/door).
func TestEngineSpeaksNoHTTP(t *testing.T) {
	t.Parallel()
	for _, p := range enginePackages(t) {
		for _, dep := range goList(t, "-deps", p) {
			for _, lib := range httpLibraries {
				if dep == lib || strings.HasPrefix(dep, lib+"/") {
					t.Errorf("the engine's package %s depends on %s, an HTTP library: only doors may", p, dep)
				}
			}
		}
		dir := filepath.Join(repoRoot, filepath.FromSlash(strings.TrimPrefix(p, module)))
		for _, use := range httpUses(t, dir) {
			t.Errorf("the engine's package %s uses %s: the engine may use net/http's status codes only", p, use)
		}
	}
}

// httpUses lists what the non-test Go files of dir use of net/http
// beyond its status codes: an import of a package below it, or a name
// of it that is not a Status constant ("http.Request (in file.go)").
func httpUses(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var uses []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		name := ""
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case strings.HasPrefix(path, "net/http/"):
				uses = append(uses, path+" (in "+filepath.Base(f)+")")
			case path == "net/http":
				name = "http"
				if imp.Name != nil {
					name = imp.Name.Name
				}
			}
		}
		if name == "" {
			continue
		}
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && !strings.HasPrefix(sel.Sel.Name, "Status") {
				uses = append(uses, name+"."+sel.Sel.Name+" (in "+filepath.Base(f)+")")
			}
			return true
		})
	}
	return uses
}

// TestNoCastOfTheCompiledSchema: the engine hands out *gql.Schema typed;
// nothing casts an interface back to it.
func TestNoCastOfTheCompiledSchema(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, cast := range []string{".(*gql" + ".Schema)", ".(*" + "Schema)"} { // split: this file is read too
			if strings.Contains(string(b), cast) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s casts to the compiled schema (%s)", rel, cast)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
