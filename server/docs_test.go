package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsStayInTheRepository: no Markdown file of the repository links
// or points to ../shared, which a clone does not have.
func TestDocsStayInTheRepository(t *testing.T) {
	root := ".." // the repository, from server/
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "../shared") {
			t.Errorf("%s points to ../shared, outside the repository", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
