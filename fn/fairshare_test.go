package fn

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFairShare: an instance runs at most its share of calls at once
// (setting; a quarter of the bound by default); its next call waits and,
// if none ends before its deadline, answers ErrBusy naming the share,
// while another instance's calls run; the calls a function makes back
// take no slot of their own; ended calls free their slots.
func TestFairShare(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.MaxConcurrent, c.Timeout = 8, 30*time.Second })
	e.publish("hold", "v1", `exports.main = async (input, cb) => { await core.graphql('{ hold }'); cb({ ok: true }, null); };`)
	e.publish("quick", "v1", `exports.main = (input, cb) => cb({ ok: true }, null);`)

	inside := make(chan struct{}, 16)
	release := make(chan struct{})
	hold := func(ctx context.Context, _ string, _ map[string]any) ([]byte, error) {
		inside <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return []byte(`{"data":{}}`), nil
	}
	// Instance a: its default share is 8/4 = 2. Two calls hold their slots.
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.invoke(Invocation{Name: "hold", Version: "v1", Caller: Caller{InstanceID: "a"}, GraphQL: hold})
			errs <- err
		}()
	}
	<-inside
	<-inside
	// Another instance runs meanwhile.
	if _, err := e.invoke(Invocation{Name: "quick", Version: "v1", Caller: Caller{InstanceID: "b"}}); err != nil {
		t.Fatalf("instance b while a is at its share: %v", err)
	}
	// a's third call waits for a slot until its deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err := e.js.Invoke(ctx, Invocation{App: testApp, Name: "quick", Version: "v1", Caller: Caller{InstanceID: "a"}})
	cancel()
	if err == nil {
		t.Fatal("a third call of instance a ran beside the two holding its share")
	}
	// A changed share counts from the calls that start after it: 3 lets
	// a call of a in.
	if _, err := e.invoke(Invocation{Name: "quick", Version: "v1", Caller: Caller{InstanceID: "a"}, MaxConcurrent: 3}); err != nil {
		t.Errorf("with a share of 3: %v", err)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a holding call: %v", err)
		}
	}
	if n := e.js.share.running(); n != 0 {
		t.Errorf("%d instances still counted after every call ended", n)
	}
	if _, err := e.invoke(Invocation{Name: "quick", Version: "v1", Caller: Caller{InstanceID: "a"}}); err != nil {
		t.Errorf("a after its calls ended: %v", err)
	}
}

// TestFairShareBusy: a call that waits for its instance's share past its
// own deadline answers ErrBusy saying so; other instances and a caller's
// own cancellation are told apart.
func TestFairShareBusy(t *testing.T) {
	t.Parallel()
	var f fairShare
	hold, err := f.acquire(context.Background(), "a", 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, errDeadline)
	defer cancel()
	_, err = f.acquire(ctx, "a", 1)
	errorIs(t, err, ErrBusy)
	errorIs(t, err, ErrShareBusy)
	if err == nil || !strings.Contains(err.Error(), "the instance runs its share of calls (1 at once)") {
		t.Errorf("error = %v, want the share named", err)
	}
	other, err := f.acquire(context.Background(), "b", 1)
	if err != nil {
		t.Fatalf("instance b while a is full: %v", err)
	}
	other()
	canceled, stop := context.WithCancel(context.Background())
	stop()
	if _, err := f.acquire(canceled, "a", 1); err == nil || errors.Is(err, ErrBusy) {
		t.Errorf("a canceled caller: %v, want its own error", err)
	}
	hold()
	if f.running() != 0 {
		t.Errorf("%d instances counted after every slot was released", f.running())
	}
}
