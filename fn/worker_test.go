package fn

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestLatePackageAnswerIsDropped drives a real worker process through
// the protocol by hand, as the service does under heavy load: a call
// reaches its worker with no time left (it waited for a slot), the
// worker asks for its package and gives up at the deadline, and the
// service's answer to that request comes all the same, before the next
// call. Whether the worker read that answer while it waited (and then
// saw its deadline) or only once idle, the answer belongs to no call:
// the next call, of another package, runs its own. Each round uses
// packages not seen before, so each asks again. (The late answer used to
// be kept, and the next call to ask for a package failed "asked for
// package B, got A".)
//
// hostile checklist 39: a call stopped at its time-out leaves nothing
// that fails another tenant's next call on the same worker.
func TestLatePackageAnswerIsDropped(t *testing.T) {
	t.Parallel()
	const rounds = 8
	e := newEnv(t, nil)
	frameOf := func(name string) packageFrame {
		e.publish(name, "v1", fmt.Sprintf(`exports.main = (input, cb) => cb(%q, null);`, name))
		p, err := e.pk.Load(context.Background(), testApp, name, "v1")
		if err != nil {
			t.Fatal(err)
		}
		return packageFrame{App: p.App, Name: p.Name, Version: p.Version, SHA256: p.SHA256, Main: p.Main, Files: p.files}
	}
	in, _ := json.Marshal(input{Args: map[string]any{}, Env: map[string]string{}, Core: Caller{InstanceID: "inst1"}})
	p, err := e.js.startProcess()
	if err != nil {
		t.Fatal(err)
	}
	defer p.kill()
	expect := func(want byte) []byte {
		t.Helper()
		kind, body, err := readFrame(p.r)
		if err != nil || kind != want {
			t.Fatalf("read frame %q (%v), want %q", kind, err, want)
		}
		return body
	}
	// call hands the worker a call of pf with timeout left, answers its
	// package request at once (as the service does), and returns its
	// answer.
	call := func(pf packageFrame, timeout time.Duration) doneFrame {
		t.Helper()
		cf := callFrame{App: pf.App, Name: pf.Name, Version: pf.Version, SHA256: pf.SHA256, Input: in, Timeout: timeout, Memory: 64 << 20}
		if err := p.sendRaw(frameCall, cf.encode()); err != nil {
			t.Fatal(err)
		}
		var req packageRequest
		if err := json.Unmarshal(expect(framePackage), &req); err != nil || req.SHA256 != pf.SHA256 {
			t.Fatalf("a call of %s asked for %+v (%v)", pf.Name, req, err)
		}
		if err := p.send(framePackage, pf); err != nil {
			t.Fatal(err)
		}
		var d doneFrame
		if err := d.decode(expect(frameDone)); err != nil {
			t.Fatal(err)
		}
		return d
	}

	for i := range rounds {
		late, next := frameOf(fmt.Sprint("late", i)), frameOf(fmt.Sprint("next", i))
		// No time left: it ends with its time-out, or, when the worker
		// read the answer before it looked at the deadline, its result.
		if d := call(late, time.Nanosecond); d.Err == nil && string(d.Result) != fmt.Sprintf("%q", late.Name) {
			t.Fatalf("round %d: the late call answered %s, want its time-out or %q", i, d.Result, late.Name)
		}
		if d := call(next, time.Minute); d.Err != nil || string(d.Result) != fmt.Sprintf("%q", next.Name) {
			t.Fatalf("round %d: the next call answered %s, error %+v, want %q", i, d.Result, d.Err, next.Name)
		}
	}
}
