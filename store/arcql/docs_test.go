package arcql

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsExamples: every example of docs/arcql.md parses and binds
// against the test schema's Book, and the error the page quotes is the
// one Parse gives.
func TestDocsExamples(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "arcql.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## Examples")
	if start < 0 {
		t.Fatal("docs/arcql.md has no Examples section")
	}
	block := doc[start:]
	block = block[strings.Index(block, "```\n")+4:]
	block = block[:strings.Index(block, "```")]
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		n++
		q, err := Parse(line, DefaultLimits())
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		if _, err := Bind(q, schema, "Book", "i1"); err != nil {
			t.Errorf("%s: binding to Book: %v", line, err)
		}
	}
	if n < 10 {
		t.Errorf("only %d examples read", n)
	}
	_, err = Parse("title =", DefaultLimits())
	if err == nil || !strings.Contains(doc, "`"+err.Error()+"`") {
		t.Errorf("docs/arcql.md should quote the error of `title =` as Parse gives it: %v", err)
	}
}
