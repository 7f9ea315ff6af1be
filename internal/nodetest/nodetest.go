// Package nodetest finds Node.js and a script's npm packages for the
// tests that drive Node against the real server (the console's browser
// test, the subscription clients test). Where one is missing the test
// skips, printing why, unless EnvRequire is set: .ci/run sets it once it
// has installed them, and a missing piece then fails the test.
package nodetest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// EnvRequire, when set, turns a skip for a missing tool into a failure.
const EnvRequire = "CORE_TEST_REQUIRE_BROWSER"

// Missing skips tb with msg, printed on the test's output under the name
// test, or fails it when EnvRequire is set.
func Missing(tb testing.TB, test, msg string) {
	tb.Helper()
	if os.Getenv(EnvRequire) != "" {
		tb.Fatalf("%s (%s is set)", msg, EnvRequire)
	}
	fmt.Printf("%s skipped: %s\n", test, msg)
	tb.Skip(msg)
}

// Script returns node and the absolute path of script (a path relative to
// the test's package) once node is on PATH and each of pkgs is installed
// in the script's folder's node_modules; else Missing, saying what is
// missing and how .ci/run provides it.
func Script(tb testing.TB, test, script string, pkgs ...string) (node, path string) {
	tb.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		Missing(tb, test, "no node: install Node.js (.ci/run installs Debian's nodejs and npm where they are missing)")
	}
	path, err = filepath.Abs(script)
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Dir(path)
	for _, pkg := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			Missing(tb, test, fmt.Sprintf("no %s in %s/node_modules: run npm ci there, as .ci/run does", pkg, dir))
		}
	}
	return node, path
}

// Run runs script (from Script) with node in the script's folder, with env
// ("NAME=value") added to the test process's environment, and returns
// what it printed. limit bounds the whole run against a hang, it is no
// timing assertion: give it minutes, and let the script wait on events.
func Run(node, script string, limit time.Duration, env ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Base(script))
	cmd.Dir = filepath.Dir(script)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 10 * time.Second
	return cmd.CombinedOutput()
}

// hangGuard bounds a script run by RunOK against a hang.
const hangGuard = 3 * time.Minute

// RunOK runs script as Run does, within a hang guard of minutes, and
// fails tb with what it printed unless it ran to its end: exit status 0
// and "ok" on its last line, as the project's scripts print when every
// check of theirs passed. It returns what the script printed.
func RunOK(tb testing.TB, node, script string, env ...string) []byte {
	tb.Helper()
	out, err := Run(node, script, hangGuard, env...)
	if err != nil || !strings.HasSuffix("\n"+string(out), "\nok\n") {
		tb.Fatalf("node %s failed (%v):\n%s", filepath.Base(script), err, out)
	}
	return out
}
