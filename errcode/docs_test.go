package errcode

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDocsListEveryCode: the API page's table of error codes (docs/api.md) holds every
// Code this package declares, each with its HTTP status, and no other.
func TestDocsListEveryCode(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errcode.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || vs.Type == nil || len(vs.Values) != 1 {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Code" {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
				s, _ := strconv.Unquote(lit.Value)
				declared = append(declared, s)
			}
		}
		return true
	})
	readme, err := os.ReadFile(filepath.Join("..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\| (\\d{3}) \\|")
	var listed []string
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		listed = append(listed, m[1])
		if want := strconv.Itoa(Code(m[1]).Status()); m[2] != want {
			t.Errorf("docs/api.md: %s answers %s, the code says %s", m[1], m[2], want)
		}
	}
	slices.Sort(declared)
	slices.Sort(listed)
	if !slices.Equal(declared, listed) {
		t.Errorf("docs/api.md's error table lists\n  %s\nerrcode declares\n  %s", strings.Join(listed, " "), strings.Join(declared, " "))
	}
}
