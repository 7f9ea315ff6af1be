package archtest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// module is the module path of the repository.
const module = "github.com/corehq/core/"

// doors are the packages that turn HTTP into requests of the engine
// (gql.Engine; gql's own door, Handler, lives beside it) or of the
// directory (admin). They read and write HTTP only: none imports the store
// (the filter language, store/arcql, is not the store) or another door.
var doors = []string{"rest", "webhook"}

// TestDoorsAreThin reads each door's imports with go list: a door that
// imports the store or another door fails, naming the import.
func TestDoorsAreThin(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	isDoor := map[string]bool{}
	for _, d := range doors {
		isDoor[module+d] = true
	}
	for _, d := range doors {
		cmd := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "./"+d)
		cmd.Dir, cmd.Env = root, os.Environ()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list ./%s: %v", d, err)
		}
		for _, imp := range strings.Fields(string(out)) {
			switch {
			case imp == module+"store" || strings.HasPrefix(imp, module+"store/") && imp != module+"store/arcql":
				t.Errorf("door %s imports the store (%s): doors reach records only through the engine", d, imp)
			case isDoor[imp]:
				t.Errorf("door %s imports the door %s", d, imp)
			}
		}
	}
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
