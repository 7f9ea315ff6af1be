package archtest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the repository, from internal/archtest.
var repoRoot = filepath.Join("..", "..")

// markdownFiles are the repository's Markdown files (not the Node
// packages'), relative to the root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "artifacts") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(repoRoot, path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// manual is the user's documentation: the README and the pages of docs/,
// and the load harness's README.
func manual(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md", "ARCHITECTURE.md", "CONTRIBUTING.md", filepath.Join("cmd", "corebench", "README.md")}
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		rel, _ := filepath.Rel(repoRoot, d)
		pages = append(pages, rel)
	}
	return pages
}

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withoutCode is a page with its fenced code blocks blanked, so that a
// "# comment" in a shell sample is not read as a heading.
func withoutCode(page string) string {
	lines := strings.Split(page, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			in = !in
			lines[i] = ""
		} else if in {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

var headingRE = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)

// anchors are the GitHub anchors of a page's headings.
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	for _, m := range headingRE.FindAllStringSubmatch(withoutCode(page), -1) {
		out[slug(m[1])] = true
	}
	return out
}

// slug is GitHub's anchor of a heading: lower case, punctuation dropped
// (but - and _), spaces as -.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocsStayInTheRepository: no Markdown file of the repository links
// or points to ../shared, which a clone does not have.
func TestDocsStayInTheRepository(t *testing.T) {
	t.Parallel()
	for _, f := range markdownFiles(t) {
		if strings.Contains(read(t, f), "../shared") {
			t.Errorf("%s points to ../shared, outside the repository", f)
		}
	}
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinksResolve: every relative link of the manual names a file of
// the repository and, with a #fragment, a heading of that page.
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	for _, page := range manual(t) {
		text := read(t, page)
		for _, m := range linkRE.FindAllStringSubmatch(withoutCode(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(filepath.Join(repoRoot, dest)); err != nil {
					t.Errorf("%s links to %s, which does not exist", page, target)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(dest, ".md") && !anchors(read(t, dest))[frag] {
				t.Errorf("%s links to %s: %s has no heading with the anchor %q", page, target, dest, frag)
			}
		}
	}
}

// flagDefRE finds the flags the programs of cmd/ define on their FlagSets,
// named fs by house rule (fs.StringVar(&x,
// "name", …), fs.Bool("name", …), …).
var flagDefRE = regexp.MustCompile(`\bfs\.(?:String|Bool|Int|Int64|Uint|Float64|Duration|Func|Var)(?:Var)?\((?:&?[\w.]+, )?"([a-z][a-z0-9-]*)"`)

// definedFlags reads the flags each program of cmd/ defines, by the
// file's FlagSet name where the file has one: cmd/cored/serve.go's are
// "serve".
func definedFlags(t *testing.T) (all map[string]bool, serve []string) {
	t.Helper()
	all = map[string]bool{}
	files, err := filepath.Glob(filepath.Join(repoRoot, "cmd", "*", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range flagDefRE.FindAllStringSubmatch(string(b), -1) {
			all[m[1]] = true
			if filepath.Base(f) == "serve.go" && filepath.Base(filepath.Dir(f)) == "cored" {
				serve = append(serve, m[1])
			}
		}
	}
	return all, serve
}

// otherTools are long flags the manual shows of programs that are not
// ours (curl, crane, podman).
var otherTools = []string{"data-binary", "data-urlencode", "insecure", "tls-verify"}

var flagUseRE = regexp.MustCompile("(?:^|[\\s`(])--([a-z][a-z0-9-]+)")

// TestDocumentedFlagsExist: every --flag the manual names is a flag of one
// of our programs (or of a named other tool), and every flag of `cored
// serve` is documented in docs/configuration.md.
func TestDocumentedFlagsExist(t *testing.T) {
	t.Parallel()
	all, serve := definedFlags(t)
	if len(serve) < 10 {
		t.Fatalf("found only %d flags of cored serve (%v): the pattern no longer reads serve.go", len(serve), serve)
	}
	for _, page := range manual(t) {
		for _, m := range flagUseRE.FindAllStringSubmatch(read(t, page), -1) {
			if !all[m[1]] && !slices.Contains(otherTools, m[1]) {
				t.Errorf("%s documents --%s, which no program of cmd/ defines", page, m[1])
			}
		}
	}
	config := read(t, filepath.Join("docs", "configuration.md"))
	for _, f := range serve {
		if !strings.Contains(config, "`--"+f+"`") && !strings.Contains(config, "`--"+f+" ") {
			t.Errorf("docs/configuration.md does not document cored serve --%s", f)
		}
	}
}

var issueRE = regexp.MustCompile(`(?i)\bissues? #?\d+`)

// TestNoIssueNumbers: the manual speaks of the service, not of a tracker a
// clone cannot see.
func TestNoIssueNumbers(t *testing.T) {
	t.Parallel()
	for _, page := range manual(t) {
		if m := issueRE.FindString(read(t, page)); m != "" {
			t.Errorf("%s refers to %q", page, m)
		}
	}
}

// codePathRE finds a code span that names a path of the repository:
// `gql/engine.go`, `internal/nodetest/`, `rest/rewrite*.go`.
var codePathRE = regexp.MustCompile("`(\\.?[a-z][\\w.-]*(?:/[\\w.*-]+)*/?)`")

// TestNamedPathsExist: every path the architecture page and the
// contributors' guide name in code spans, beginning with a folder or file
// of the repository's root, exists (a pattern matches something), so that
// their "where to look" stays true when code moves.
func TestNamedPathsExist(t *testing.T) {
	t.Parallel()
	for _, page := range []string{"ARCHITECTURE.md", "CONTRIBUTING.md"} {
		for _, m := range codePathRE.FindAllStringSubmatch(read(t, page), -1) {
			p := m[1]
			first, _, nested := strings.Cut(p, "/")
			if !nested {
				continue // a name, not a path
			}
			if _, err := os.Stat(filepath.Join(repoRoot, first)); err != nil {
				continue // not of the repository (a media type, a route)
			}
			found, err := filepath.Glob(filepath.Join(repoRoot, filepath.FromSlash(strings.TrimSuffix(p, "/"))))
			if err != nil || len(found) == 0 {
				t.Errorf("%s names %s, which does not exist", page, p)
			}
		}
	}
}
