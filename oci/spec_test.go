package oci_test

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/corehq/core/internal/toolbin"
	"github.com/corehq/core/oci"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store/bolt/bolttest"
)

// TestDistributionSpec runs the OCI distribution-spec conformance suites
// against a real cored on the embedded store, with an app's publishing
// token (on the MongoDB-wire test server they pass too, but take minutes
// there): the suite of
// 2026-08-31 (tools/ocispec: pull, push, content discovery and
// management, referrers, sha512 blobs and manifests, artifacts,
// non-distributable layers, …) and the v1.1 suite (tools/ocispec-v1.1),
// each pinned in its module's go.mod and built from the Go module proxy
// with go test -c (cached by internal/toolbin). Every workflow they run
// must pass.
func TestDistributionSpec(t *testing.T) {
	t.Parallel()
	r := start(t, servertest.WithStore(bolttest.Open(t)))
	pw := r.token("spec")
	for _, c := range []struct {
		tool string
		env  []string
		// check reads the suite's output.
		check func(out string) string
	}{
		{"ocispec", []string{"OCI_REGISTRY=" + r.host, "OCI_TLS=disabled", "OCI_REPO1=spec/repo1", "OCI_REPO2=spec/repo2",
			"OCI_RESULTS_DIR=" + t.TempDir(), "OCI_LOG=warn"}, checkSuite},
		{"ocispec-v1.1", []string{"OCI_ROOT_URL=" + r.env.URL, "OCI_NAMESPACE=spec/v11", "OCI_CROSSMOUNT_NAMESPACE=spec/v11other",
			"OCI_TEST_PULL=1", "OCI_TEST_PUSH=1", "OCI_TEST_CONTENT_DISCOVERY=1", "OCI_TEST_CONTENT_MANAGEMENT=1",
			"OCI_HIDE_SKIPPED_WORKFLOWS=1", "OCI_REPORT_DIR=" + t.TempDir()}, checkGinkgoSuite},
	} {
		t.Run(c.tool, func(t *testing.T) {
			bin, err := toolbin.Build(c.tool, "test", "-c", "github.com/opencontainers/distribution-spec/conformance")
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(t.Context(), bin)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "OCI_USERNAME="+oci.User, "OCI_PASSWORD="+pw)
			cmd.Env = append(cmd.Env, c.env...)
			out, err := cmd.CombinedOutput()
			text := ansi.ReplaceAllString(string(out), "")
			if err != nil {
				t.Fatalf("the suite failed (%v):\n%s", err, toolbin.Tail([]byte(text), 8000))
			}
			if msg := c.check(text); msg != "" {
				t.Fatalf("%s:\n%s", msg, toolbin.Tail([]byte(text), 8000))
			}
		})
	}
}

// ansi matches the colour codes of the suites' output.
var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// checkSuite reads the summary of the 2026 suite: one line per workflow
// and kind of content, "<name>: Pass", "FAIL" or "Disabled".
func checkSuite(out string) string {
	pass := 0
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasSuffix(line, ": FAIL") || strings.HasSuffix(line, ":       FAIL") || strings.Contains(line, "failed test"):
			return "a workflow failed: " + strings.TrimSpace(line)
		case strings.HasSuffix(line, "Pass"):
			pass++
		}
	}
	if pass < 100 || strings.Contains(out, "detected a failure") {
		return "the summary shows " + strconv.Itoa(pass) + " passing lines and no failure, want hundreds"
	}
	return ""
}

// checkGinkgoSuite reads the v1.1 suite's summary: SUCCESS, at least 70
// specs run.
func checkGinkgoSuite(out string) string {
	m := regexp.MustCompile(`Ran (\d+) of (\d+) Specs`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "SUCCESS!") {
		return "no successful summary"
	}
	if n, _ := strconv.Atoi(m[1]); n < 70 {
		return "only " + m[1] + " specs ran"
	}
	return ""
}
