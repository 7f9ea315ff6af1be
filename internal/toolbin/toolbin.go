// Package toolbin builds the programs the tests run that live in modules
// of their own under tools/ (the FerretDB test server, the OCI
// distribution-spec conformance suite), so that their dependencies stay
// out of the service's go.mod. A build is cached under the user cache
// directory (or the temporary directory) by the hash of the module's
// files and the Go version; concurrent test processes take a file lock so
// that one builds while the others wait. A build needs Go and the module
// proxy only.
package toolbin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Build builds tools/<name> with `go <command> -o <binary> <args...>` run
// in that module (command "build" with args "-trimpath", ".", say),
// unless a build of the
// same sources is cached, and returns the binary's path.
func Build(name, command string, args ...string) (string, error) {
	src, err := Dir(name)
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
		h.Write(b)
	}
	fmt.Fprintf(h, "%s %s/%s %s %q\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, command, args)
	root, err := os.UserCacheDir()
	if err != nil {
		root = os.TempDir()
	}
	dir := filepath.Join(root, "corehq-core", name+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(dir, "build.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // built by another process meanwhile
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	tmp := bin + ".tmp"
	cmd := exec.Command(goBin, append([]string{command, "-o", tmp}, args...)...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building %s in %s: %w\n%s", name, src, err, Tail(out, 4000))
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	return bin, nil
}

// Dir finds tools/<name> from this file's place in the repository.
func Dir(name string) (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the repository")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "tools", name)
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("the tools module %s is missing: %w", name, err)
	}
	return dir, nil
}

// Tail is the last n bytes of b, for error messages.
func Tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
