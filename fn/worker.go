package fn

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// workerEnv makes a binary that links package fn a function worker: when
// the variable holds workerProtocol, package fn's init serves the worker
// protocol (wire.go) on stdin and stdout and exits, before main (or a
// test binary's TestMain) runs. The service sets it for the processes it
// starts (process.go); nothing else should.
const (
	workerEnv      = "CORE_FN_WORKER"
	workerProtocol = "1"
)

func init() {
	if os.Getenv(workerEnv) == workerProtocol {
		out := os.Stdout
		os.Stdout = os.Stderr // the protocol owns stdout: stray prints go to stderr
		// Not on this goroutine: during init it is locked to the main
		// thread, and every wait would hand the thread over.
		code := make(chan int)
		go func() { code <- serveWorker(os.Stdin, out) }()
		os.Exit(<-code)
	}
}

// memoryCheck is how often a worker looks at the heap of the call it
// runs. A call allocating in a loop is stopped a few milliseconds past
// its bound; one allocation too large for the process's data limit ends
// the process (the service answers the same error and starts another).
const memoryCheck = 5 * time.Millisecond

// dataSlack is what a worker's data limit allows beyond the runtime's
// baseline and Config.MaxMemory: collector and runtime overhead.
const dataSlack = 64 << 20

// workerCacheBytes bounds the packages a worker keeps compiled.
const workerCacheBytes = 64 << 20

// settleAbove is how far a worker's heap may grow, garbage included,
// past what it was after its last collection before the worker collects
// it again between calls (after the answer is sent). A call's memory
// watch measures from the heap the last collection found live: without
// this, what the call before left behind counted as the worker's own,
// and the next call could grow past its bound by that much, its watch
// collecting a heap twice the size every few milliseconds.
const settleAbove = 4 << 20

// workerRetire is how much more memory than it held when it started a
// worker may hold after a call and still be kept for the next one: one
// that grew more (a call that allocated much, its garbage not yet
// returned to the operating system, a large package cache) says so with
// its answer and the service ends it. An idle worker therefore holds at
// most its start size (about 4 MiB of its own, 27 MiB resident with the
// pages of the binary it shares) plus this.
const workerRetire = 16 << 20

// worker is the worker process's end of the protocol: it runs one call
// at a time on an embedded runtime of its own, asks the service for
// packages it lacks, and passes core.graphql requests to it.
//
// Frames are read by whichever goroutine waits for one (await): the
// main loop for the next call, the call for its package, core.graphql
// for its answer. The one holding turn reads a frame and hands it to
// whom it belongs, so a call that makes no request is read and answered
// without a hand-over between goroutines.
type worker struct {
	js *JS

	r      *bufio.Reader
	turn   chan struct{} // the right to read: one token
	closed chan struct{} // the service's end of the pipe closed

	frameWriter // to the service

	calls    chan callFrame
	packages chan packageFrame

	mu      sync.Mutex
	replies map[uint64]chan graphqlReply
	nextID  uint64
	// want is the digest of the package the running call waits for ("":
	// none). A package frame of any other digest answers the request of a
	// call stopped before its answer came (its deadline passed while the
	// service was slow to answer) and is dropped: kept, the next call to
	// ask for a package took it for its own.
	want string

	cache   map[string]*Package // by digest
	cached  int
	entries []LogEntry // the running call's log

	held    int64 // heldMemory when the worker became ready
	settled int64 // heapObjects after the last collection between calls
}

// serveWorker runs the worker protocol until the service closes in.
func serveWorker(in io.Reader, out io.Writer) int {
	r := bufio.NewReader(in)
	kind, body, err := readFrame(r)
	var hello workerHello
	if err == nil && kind != frameHello {
		err = fmt.Errorf("first frame %q, want hello", kind)
	}
	if err == nil {
		err = json.Unmarshal(body, &hello)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fn worker: %v\n", err)
		return 2
	}
	cfg := hello.Config
	cfg.Processes = false
	cfg.MaxConcurrent = 1
	wk := &worker{
		r:           r,
		turn:        make(chan struct{}, 1),
		closed:      make(chan struct{}),
		frameWriter: frameWriter{w: bufio.NewWriter(out)},
		calls:       make(chan callFrame, 1),
		packages:    make(chan packageFrame, 1),
		replies:     map[uint64]chan graphqlReply{},
		cache:       map[string]*Package{},
	}
	wk.turn <- struct{}{}
	if wk.js, err = NewJS(cfg, wk, wk); err != nil {
		fmt.Fprintf(os.Stderr, "fn worker: %v\n", err)
		return 2
	}
	// The collector keeps the heap under the largest bound a call may
	// have; the operating system ends the process a little past it.
	debug.SetMemoryLimit(readMetric("/memory/classes/total:bytes") + cfg.MaxMemory)
	if err := limitData(cfg.MaxMemory + dataSlack); err != nil {
		fmt.Fprintf(os.Stderr, "fn worker: limiting memory: %v\n", err)
		return 2
	}
	wk.settle()
	wk.held = heldMemory()
	if err := wk.sendRaw(frameReady, nil); err != nil {
		return 1
	}
	for {
		cf, ok := await(wk, wk.calls, nil)
		if !ok {
			return 0
		}
		done := wk.run(cf)
		done.Retire = heldMemory() > wk.held+workerRetire
		if err := wk.sendRaw(frameDone, done.encode()); err != nil {
			return 1
		}
		if !done.Retire && heapObjects() > wk.settled+settleAbove {
			wk.settle()
		}
	}
}

// settle collects the heap between calls, so that the next call's
// memory watch starts from what the worker itself keeps (settleAbove).
// It costs a collection of that (a few MiB, about a millisecond), and
// only after calls that allocated more than settleAbove.
func (wk *worker) settle() {
	runtime.GC()
	wk.settled = heapObjects()
}

// await returns what ch delivers, reading frames itself whenever no
// other goroutine does; false when done closes or the service's end of
// the pipe closed.
func await[T any](wk *worker, ch chan T, done <-chan struct{}) (T, bool) {
	var zero T
	for {
		select {
		case v := <-ch:
			return v, true
		case <-done:
			return zero, false
		case <-wk.closed:
			return zero, false
		case <-wk.turn:
			select {
			case v := <-ch: // delivered while waiting for the turn
				wk.turn <- struct{}{}
				return v, true
			default:
			}
			err := wk.readOne()
			wk.turn <- struct{}{}
			if err != nil {
				return zero, false
			}
		}
	}
}

// readOne reads a frame and hands it to whom it belongs; frames of a
// call that has ended are dropped.
func (wk *worker) readOne() error {
	kind, body, err := readFrame(wk.r)
	if err != nil {
		close(wk.closed)
		return err
	}
	switch kind {
	case frameCall:
		var cf callFrame
		if cf.decode(body) == nil {
			wk.calls <- cf // the service sends a call only after the last one's answer
		}
	case framePackage:
		var pf packageFrame
		if json.Unmarshal(body, &pf) != nil {
			break
		}
		wk.mu.Lock()
		wanted := pf.SHA256 == wk.want
		wk.mu.Unlock()
		if wanted {
			select {
			case wk.packages <- pf:
			default: // an answer already waits (a stale one of the same digest)
			}
		}
	case frameGraphQL:
		var rep graphqlReply
		if json.Unmarshal(body, &rep) == nil {
			wk.mu.Lock()
			ch := wk.replies[rep.ID]
			wk.mu.Unlock()
			if ch != nil {
				ch <- rep // buffered, one reply per request
			}
		}
	}
	return nil
}

// run runs one call as JS.Invoke would, with the memory watch.
func (wk *worker) run(cf callFrame) doneFrame {
	start := time.Now()
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	ctx, cancel := context.WithTimeoutCause(ctx, cf.Timeout, errDeadline)
	defer cancel()

	inv := &Invocation{App: cf.App, Name: cf.Name, Version: cf.Version, Fetch: cf.Fetch}
	fail := func(err error) doneFrame { return doneFrame{Err: toWire(err), Duration: time.Since(start)} }
	var in input
	if err := json.Unmarshal(cf.Input, &in); err != nil {
		return fail(&ExceptionError{Name: cf.Name, Version: cf.Version, Message: "the worker could not read the call's input"})
	}
	inv.Caller = in.Core
	if cf.GraphQL {
		inv.GraphQL = wk.graphql
	}
	inv.remember = wk.remember
	pkg, err := wk.pkg(ctx, cf)
	if err != nil {
		return fail(err)
	}
	watch := watchMemory(cf.Memory, stop)
	c := newCall(wk.js, pkg, inv)
	o := c.run(ctx, &in)
	watch()
	wk.entries = nil
	c.finish(o.err)
	done := doneFrame{Err: toWire(o.err), Log: wk.entries, Duration: time.Since(start)}
	if o.err == nil {
		done.Result = o.res.JSON
	}
	return done
}

// pkg returns the call's package: cached, or asked of the service.
func (wk *worker) pkg(ctx context.Context, cf callFrame) (*Package, error) {
	if p := wk.cache[cf.SHA256]; p != nil {
		return p, nil
	}
	wk.mu.Lock()
	wk.want = cf.SHA256
	wk.mu.Unlock()
	defer func() {
		wk.mu.Lock()
		wk.want = ""
		wk.mu.Unlock()
	}()
	if err := wk.send(framePackage, packageRequest{SHA256: cf.SHA256}); err != nil {
		return nil, err
	}
	var pf packageFrame
	for {
		var ok bool
		if pf, ok = await(wk, wk.packages, ctx.Done()); !ok {
			return nil, fmt.Errorf("fn worker: no package %s: %w", cf.SHA256, context.Cause(ctx))
		}
		if pf.SHA256 == cf.SHA256 {
			break
		}
		// Delivered for the call before, whose wait ended just as it
		// came: not this call's.
	}
	p := NewPackage(pf.App, pf.Name, pf.Version, pf.SHA256, &Bundle{Main: pf.Main, Files: pf.Files})
	if wk.cached+p.Size() > workerCacheBytes {
		clear(wk.cache)
		wk.cached = 0
	}
	wk.cache[pf.SHA256] = p
	wk.cached += p.Size()
	return p, nil
}

// graphql is core.graphql in a worker: the service runs the request.
func (wk *worker) graphql(ctx context.Context, query string, variables map[string]any) ([]byte, error) {
	ch := make(chan graphqlReply, 1)
	wk.mu.Lock()
	wk.nextID++
	id := wk.nextID
	wk.replies[id] = ch
	wk.mu.Unlock()
	defer func() {
		wk.mu.Lock()
		delete(wk.replies, id)
		wk.mu.Unlock()
	}()
	if err := wk.send(frameGraphQL, graphqlRequest{ID: id, Query: query, Variables: variables}); err != nil {
		return nil, err
	}
	rep, ok := await(wk, ch, ctx.Done())
	switch {
	case !ok && ctx.Err() != nil:
		return nil, ctx.Err()
	case !ok:
		return nil, errors.New("fn worker: the service closed the pipe")
	case rep.Error != "":
		return nil, errors.New(rep.Error)
	}
	return rep.Response, nil
}

// remember asks the service whether a verified webhook id is new
// (core.verifyWebhook): the ids are the service process's.
func (wk *worker) remember(ctx context.Context, id string, until time.Time) (bool, error) {
	ch := make(chan graphqlReply, 1)
	wk.mu.Lock()
	wk.nextID++
	rid := wk.nextID
	wk.replies[rid] = ch
	wk.mu.Unlock()
	defer func() {
		wk.mu.Lock()
		delete(wk.replies, rid)
		wk.mu.Unlock()
	}()
	if err := wk.send(frameGraphQL, graphqlRequest{ID: rid, Replay: &replayCheck{ID: id, Until: until}}); err != nil {
		return false, err
	}
	rep, ok := await(wk, ch, ctx.Done())
	switch {
	case !ok && ctx.Err() != nil:
		return false, ctx.Err()
	case !ok:
		return false, errors.New("fn worker: the service closed the pipe")
	case rep.Error != "":
		return false, errors.New(rep.Error)
	}
	return string(rep.Response) == "true", nil
}

// Load is the worker's Source: packages come with calls (pkg).
func (wk *worker) Load(context.Context, string, string, string) (*Package, error) {
	return nil, errors.New("fn worker: packages are sent by the service")
}

// Append is the worker's LogSink: the running call's entries go back
// with its answer.
func (wk *worker) Append(_ string, entries []LogEntry) {
	wk.entries = append(wk.entries, entries...)
}

// memoryExceeded is the cause a call is stopped with when its heap
// grew past its bound.
type memoryExceeded struct{ limit int64 }

func (e *memoryExceeded) Error() string {
	return "fn: the call used more than " + formatBytes(e.limit)
}

// watchMemory stops the call (through stop) when the heap grows more
// than limit bytes past what it was when the call began; the returned
// function ends the watch.
func watchMemory(limit int64, stop context.CancelCauseFunc) (end func()) {
	base := heapLive()
	var (
		mu    sync.Mutex
		ended bool
		t     *time.Timer
	)
	// A timer rather than a goroutine: most calls end before the first
	// look, and starting a goroutine wakes a thread. t is set under mu,
	// which the timer's function takes before it reads t: under load the
	// first look may come before AfterFunc has returned (it then found t
	// nil, and the worker died of the nil Reset).
	mu.Lock()
	defer mu.Unlock()
	t = time.AfterFunc(memoryCheck, func() {
		if heapObjects()-base > limit {
			// Garbage counts until collected: collect, then judge what
			// the call still holds.
			runtime.GC()
			if heapLive()-base > limit {
				stop(&memoryExceeded{limit: limit})
				return
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if !ended {
			t.Reset(memoryCheck)
		}
	})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		ended = true
		t.Stop()
	}
}

func heapLive() int64 { return readMetric("/gc/heap/live:bytes") }

// heldMemory is the memory the Go runtime holds from the operating
// system and has not given back: what the process's resident size
// follows.
func heldMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

func heapObjects() int64 { return readMetric("/memory/classes/heap/objects:bytes") }

func readMetric(name string) int64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
