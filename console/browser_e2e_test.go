package console_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/internal/nodetest"
	"github.com/corehq/core/server/servertest"
)

// TestConsoleInABrowser drives the console in Debian's chromium with
// playwright-core (e2e/console.mjs) against the real server: sign in (a
// wrong token first), publish a release with an SDL error and then fixed,
// create an instance and change its release, create, filter and page
// records; sort, edit, fill a list of references, trash, untrash and
// delete records (with clearArrayReferences); change an instance's
// settings, rotate its token, force a breaking release, delete an
// instance behind its typed domain; the phone size in the dark scheme;
// run a query in the GraphQL playground (with completion), upload a
// function version, send a webhook test and read the line the function
// logged; sign out. It keeps a
// screenshot of each step in CORE_CONSOLE_ARTIFACTS, by default
// console/e2e/artifacts (gitignored), and prints where.
func TestConsoleInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test starts chromium")
	}
	chromium, node, script := browserTools(t)

	artifacts := os.Getenv("CORE_CONSOLE_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(filepath.Dir(script), "artifacts")
	}
	artifacts, err := filepath.Abs(artifacts)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(artifacts, "[0-9]*.png")) // its own, not the other tests'
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Printf("console browser test: screenshots in %s\n", artifacts)
	t.Logf("screenshots in %s", artifacts)

	env := servertest.Start(t)
	// Every step waits for its element (Playwright's own polling, 15 s
	// each at most).
	runScript(t, node, script, 4*time.Minute,
		"CORE_URL="+env.URL,
		"CORE_ADMIN_TOKEN="+servertest.AdminToken,
		"CORE_ARTIFACTS="+artifacts,
		"CHROMIUM="+chromium,
	)
}

// runScript runs a Node script of e2e/ with env added to the test's
// environment, logs what it printed, and fails the test unless it
// succeeded and printed "ok" on a line of its own. limit bounds the
// whole run (a broken one), not a timing assertion.
func runScript(t *testing.T, node, script string, limit time.Duration, env ...string) {
	t.Helper()
	out, err := nodetest.Run(node, script, limit, env...)
	t.Logf("node %s:\n%s", filepath.Base(script), out)
	if err != nil {
		t.Fatalf("the browser test failed: %v", err)
	}
	if !strings.Contains(string(out), "\nok\n") {
		t.Fatalf("the browser test did not finish")
	}
}

// browserTools finds chromium, node and the playwright script with its
// node_modules, or skips (fails under nodetest.EnvRequire) saying what is
// missing and how .ci/run provides it.
func browserTools(t *testing.T) (chromium, node, script string) {
	t.Helper()
	const test = "console browser test"
	chromium = os.Getenv("CHROMIUM")
	if chromium == "" {
		for _, name := range []string{"chromium", "/usr/bin/chromium", "chromium-browser"} {
			if p, err := exec.LookPath(name); err == nil {
				chromium = p
				break
			}
		}
	}
	if chromium == "" {
		nodetest.Missing(t, test, "no chromium: install Debian's (apt-get install chromium), as .ci/run does, or set CHROMIUM")
	}
	node, script = nodetest.Script(t, test, filepath.Join("e2e", "console.mjs"), "playwright-core")
	return chromium, node, script
}
