//go:build unix

package fn

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestNoSourceMapReads: a sourceMappingURL comment in code compiled at
// run time (eval, new Function) must not make the runtime open a host
// file. The "map" is a FIFO without a writer: opening it would block the
// call until its deadline.
func TestNoSourceMapReads(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "map.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	t.Cleanup(func() {
		// Unblock a reader should the runtime have opened the FIFO.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	e := newEnv(t, func(c *Config) { c.Timeout = 2 * time.Second })
	e.publish("evals", "v1", `exports.main = (input, cb) => {
		const a = eval('1 + 1\n//# sourceMappingURL=' + input.args.map);
		const b = new Function('return 2\n//# sourceMappingURL=' + input.args.map)();
		cb(a + b, null);
	};`)
	// Published source with such a comment reads nothing either (at
	// publication or when required).
	e.publish("static", "v1", "exports.main = (i, cb) => cb(1, null);\n//# sourceMappingURL=file://"+fifo+"\n")

	start := time.Now()
	// goja reads a file: URL as an absolute path (a bare path relative to
	// the working directory).
	res, err := e.invoke(Invocation{Name: "evals", Version: "v1", Args: map[string]any{"map": "file://" + fifo}})
	if err != nil || res.Value != float64(4) {
		t.Fatalf("evals = %v, %v", res.Value, err)
	}
	res, err = e.invoke(Invocation{Name: "static", Version: "v1"})
	if err != nil || res.Value != float64(1) {
		t.Fatalf("static = %v, %v", res.Value, err)
	}
	// Opening the FIFO for reading would block until a writer came,
	// which never does: a runtime that tried would not have answered at
	// all. The bound is only there to fail with a reason; it is generous
	// (a minute) so that a loaded machine never trips it.
	if d := time.Since(start); d > time.Minute {
		t.Errorf("took %s: the runtime waited on the FIFO", d)
	}
}
