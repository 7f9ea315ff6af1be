package fn

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/internal/procstatus"
)

// TestMemoryBound: a call that allocates without end is stopped at its
// memory bound with an error naming it, in its worker process; the
// next call runs; this process's peak memory never held the function's
// heap.
func TestMemoryBound(t *testing.T) {
	t.Parallel()
	// Generous time: the race detector slows allocation tenfold, and the
	// bound, not the deadline, must stop the calls.
	e := newEnv(t, func(c *Config) { c.Timeout, c.MaxMemory = time.Minute, 128<<20 })
	// Small strings in a loop: the worker's memory watch stops it.
	e.publish("hoard", "v1", `exports.main = function () {
		const keep = [];
		for (let i = 0; ; i++) keep.push('x'.repeat(1000) + i);
	};`)
	// One allocation far past the process's data limit: the process
	// dies and is replaced.
	e.publish("huge", "v1", `exports.main = (i, cb) => cb('x'.repeat(2 * 1024 * 1024 * 1024).length, null);`)
	e.publish("quick", "v1", `exports.main = (input, cb) => cb(input.args.n * 2, null);`)

	for _, c := range []struct {
		name   string
		memory int64
		limit  string
	}{
		{"hoard", 0, "64 MiB"},
		{"hoard", 16 << 20, "16 MiB"},
		{"huge", 0, "64 MiB"},
		{"hoard", 1 << 40, "128 MiB"}, // an instance's setting is capped by MaxMemory
	} {
		_, err := e.invoke(Invocation{Name: c.name, Version: "v1", Memory: c.memory})
		errorIs(t, err, ErrResourceExhausted)
		if !strings.Contains(err.Error(), "memory limit of "+c.limit) {
			t.Errorf("%s with memory %d: error %q does not name the limit %s", c.name, c.memory, err, c.limit)
		}
		res, err := e.invoke(Invocation{Name: "quick", Version: "v1", Args: map[string]any{"n": 21}})
		if err != nil || res.Value != float64(42) {
			t.Fatalf("the call after %s answered %v, %v", c.name, res.Value, err)
		}
	}
	if hwm, err := procstatus.Self("VmHWM"); err != nil {
		t.Fatal(err)
	} else if hwm > 256<<20 {
		t.Errorf("this process's peak RSS is %d MiB: a function's heap reached it", hwm>>20)
	}
	// The function log says why the calls stopped.
	entries, err := e.logs.Read(context.Background(), "inst1", 100)
	if err != nil {
		t.Fatal(err)
	}
	var stopped int
	for _, entry := range entries {
		if strings.Contains(entry.Message, "memory limit") {
			stopped++
		}
	}
	if stopped != 4 {
		t.Errorf("the function log has %d entries about the memory limit, want 4", stopped)
	}
}
