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

// TestMemoryBoundAfterGarbage: a call is held to its own bound on a
// worker process the call before it left garbage in. Each call keeps
// n MiB for a while; on one worker (MaxConcurrent 1), 6 MiB passes and
// then 20 MiB is stopped at a 16 MiB bound: measured from what the
// worker held after the first call (its heap as last collected, which
// still counted the first call's 6 MiB), the second would have passed.
// hostile checklist 50: a function allocating without bound is stopped
// at its limit.
func TestMemoryBoundAfterGarbage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.Timeout, c.MaxConcurrent = time.Minute, 1 })
	// Holds n MiB, touched, until it has been seen by the memory watch.
	e.publish("keep", "v1", `exports.main = (input, cb) => {
		const b = new Uint8Array(input.args.n * 1048576);
		b.fill(1);
		const until = Date.now() + 300;
		while (Date.now() < until) {}
		cb(b.length, null);
	};`)
	pid := func() int {
		t.Helper()
		e.js.procs.mu.Lock()
		defer e.js.procs.mu.Unlock()
		if len(e.js.procs.idle) != 1 {
			t.Fatalf("%d idle worker processes, want 1", len(e.js.procs.idle))
		}
		return e.js.procs.idle[0].cmd.Process.Pid
	}
	for round := range 3 {
		res, err := e.invoke(Invocation{Name: "keep", Version: "v1", Memory: 16 << 20, Args: map[string]any{"n": 6}})
		if err != nil || res.Value != float64(6<<20) {
			t.Fatalf("round %d: keeping 6 MiB under a 16 MiB bound: %v, %v", round, res.Value, err)
		}
		pid() // the next call runs on this worker, the only one
		_, err = e.invoke(Invocation{Name: "keep", Version: "v1", Memory: 16 << 20, Args: map[string]any{"n": 20}})
		errorIs(t, err, ErrResourceExhausted)
		if !strings.Contains(err.Error(), "memory limit of 16 MiB") {
			t.Errorf("round %d: error %q does not name the limit", round, err)
		}
	}
}
