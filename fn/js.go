package fn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
	_ "github.com/dop251/goja_nodejs/buffer" // registers require('buffer'), behind the lazy global Buffer
	_ "github.com/dop251/goja_nodejs/util"   // registers require('util') (util.format)

	"github.com/corehq/core/internal/netguard"
)

// JS is the embedded JavaScript runtime, built on goja. Every call runs
// on a runtime of its own that no other call has touched and that is
// thrown away afterwards: nothing a function does to its globals or to
// Object.prototype can be seen by another call or another instance.
// goja builds its built-ins lazily, so a fresh runtime costs about 2 µs
// plus the built-ins the call touches; runtimes are therefore never
// reused (no state to reset, no ClearInterrupt to forget). What is pooled
// is the rest: the compiled modules (shared through each Package's
// require registry) and the goroutines calls run on (up to
// Config.MaxConcurrent workers whose stacks have already grown, ended
// after a minute idle).
//
// Lifecycle: NewJS validates the configuration; Invoke runs calls (safe
// for concurrent use); Close lets running calls finish and stops the
// workers.
type JS struct {
	cfg   Config
	src   Source
	logs  LogSink
	fetch *http.Transport
	// permit decides which addresses fetch may connect to: public ones
	// only. Tests in this package widen it to reach a loopback server.
	permit func(netip.Addr) error

	share   fairShare     // calls per instance (fairshare.go)
	replays replays       // webhook ids verified (webhookverify.go)
	procs   *processPool  // with Config.Processes: calls run in these (process.go)
	jobs    chan *job     // handed to an idle worker
	workers chan struct{} // one token per running worker
	stop    chan struct{}
	mu      sync.Mutex // orders starting workers with Close
	closed  bool
	wg      sync.WaitGroup // workers
	calls   sync.WaitGroup // calls running in processes
}

var _ Runtime = (*JS)(nil)

// job is one call handed to a worker.
type job struct {
	c  *call
	in *input
	// ctx is the call's context, carried to the worker that runs the
	// job (a message between goroutines, as an http.Request carries its
	// context); cancel ends it when the job is done.
	ctx    context.Context
	cancel context.CancelFunc
	out    chan outcome // buffered: the worker never waits for Invoke
	// release frees the call's slot of its instance's share (nil: none).
	release func()
}

// interruptGrace is how long Invoke waits, after a deadline, for a call
// stuck in native code (which Interrupt cannot stop) before it answers
// the time-out anyway; the stuck call keeps its worker until it ends.
const interruptGrace = 250 * time.Millisecond

// workerIdle is how long an idle worker waits for a call before it ends.
const workerIdle = time.Minute

// regexpTimeout makes goja's backtracking regular expressions (the ones
// Go's regexp cannot run, for example with look-ahead) give up: native
// code does not see Interrupt. The setting is global to regexp2; it is
// made once, by the first NewJS, to that runtime's call timeout.
var regexpTimeout sync.Once

// NewJS returns the JavaScript runtime, reading function packages from
// src and writing console output and failure notes to logs (nil drops
// them). Close it when done.
func NewJS(cfg Config, src Source, logs LogSink) (*JS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if src == nil {
		return nil, errors.New("fn: NewJS needs a Source of packages")
	}
	regexpTimeout.Do(func() { regexp2.DefaultMatchTimeout = cfg.Timeout })
	j := &JS{
		cfg:     cfg,
		src:     src,
		logs:    logs,
		permit:  netguard.Public,
		jobs:    make(chan *job),
		workers: make(chan struct{}, cfg.MaxConcurrent),
		stop:    make(chan struct{}),
	}
	j.fetch = j.newTransport()
	if cfg.Processes {
		j.procs = newProcessPool(cfg)
	}
	return j, nil
}

// newRuntime builds a fresh runtime with the limits every call runs
// under.
func (j *JS) newRuntime() *goja.Runtime {
	vm := goja.New()
	vm.SetMaxCallStackSize(j.cfg.MaxCallStack)
	// eval and new Function parse at run time: a sourceMappingURL comment
	// would otherwise make goja read a host file.
	vm.SetParserOptions(parser.WithDisableSourceMaps)
	return vm
}

// dispatch hands a job to an idle worker, or starts one while fewer than
// MaxConcurrent run, or waits for either until ctx ends.
func (j *JS) dispatch(ctx context.Context, jb *job) error {
	select {
	case j.jobs <- jb:
		return nil
	default:
	}
	for {
		select {
		case j.jobs <- jb:
			return nil
		case j.workers <- struct{}{}:
			j.mu.Lock()
			if j.closed {
				j.mu.Unlock()
				<-j.workers
				return ErrClosed
			}
			j.wg.Add(1)
			j.mu.Unlock()
			go j.work(jb)
			return nil
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), errDeadline) {
				return ErrBusy
			}
			return fmt.Errorf("fn: waiting for a runtime: %w", ctx.Err())
		case <-j.stop:
			return ErrClosed
		}
	}
}

// work runs jobs until idle for workerIdle or until Close.
func (j *JS) work(jb *job) {
	defer j.wg.Done()
	defer func() { <-j.workers }()
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		o := jb.c.run(jb.ctx, jb.in)
		jb.c.finish(o.err)
		if jb.release != nil {
			jb.release()
		}
		jb.cancel()
		jb.out <- o
		idle.Reset(workerIdle)
		select {
		case jb = <-j.jobs:
		case <-idle.C:
			return
		case <-j.stop:
			return
		}
	}
}

// Calls is the number of calls of an instance that run or wait for a
// slot of its share (fairshare.go).
func (j *JS) Calls(instanceID string) int { return j.share.calls(instanceID) }

// Close stops taking calls: running ones finish (Close waits for them),
// later ones get ErrClosed.
func (j *JS) Close() error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return nil
	}
	j.closed = true
	close(j.stop)
	j.mu.Unlock()
	j.wg.Wait()
	j.calls.Wait()
	if j.procs != nil {
		j.procs.close()
	}
	j.fetch.CloseIdleConnections()
	return nil
}

func (j *JS) isClosed() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.closed
}

// errDeadline is the cause of a call context that reached the call's
// own deadline.
var errDeadline = errors.New("fn: call deadline")

// outcome is what a call ended with.
type outcome struct {
	res Result
	err error
}

// Invoke runs one call: it loads the package (cached), waits for a free
// slot, and runs main(input, callback) on a fresh runtime under the
// call's deadline (Config.Timeout, or ctx's when sooner), which covers the
// wait too. See Runtime for the errors.
func (j *JS) Invoke(ctx context.Context, inv Invocation) (Result, error) {
	if j.isClosed() {
		return Result{}, ErrClosed
	}
	if depthOf(ctx) >= j.cfg.MaxDepth {
		return Result{}, fmt.Errorf("%w: %s version %s would be call %d (limit %d)", ErrTooDeep, inv.Name, inv.Version, depthOf(ctx)+1, j.cfg.MaxDepth)
	}
	pkg, err := j.src.Load(ctx, inv.App, inv.Name, inv.Version)
	if err != nil {
		return Result{}, err
	}
	input, err := encodeInput(&inv, j.cfg.MaxInputBytes)
	if err != nil {
		return Result{}, err
	}
	cctx, cancel := context.WithTimeoutCause(ctx, j.cfg.Timeout, errDeadline)
	jb := &job{c: newCall(j, pkg, &inv), in: input, ctx: cctx, cancel: cancel, out: make(chan outcome, 1)}
	if depthOf(ctx) == 0 && inv.Caller.InstanceID != "" {
		// The slot is the instance's until the call ends, even one stuck
		// past its deadline in native code (work releases it).
		if jb.release, err = j.share.acquire(cctx, inv.Caller.InstanceID, j.cfg.instanceShare(inv.MaxConcurrent)); err != nil {
			cancel()
			return Result{}, err
		}
	}
	if j.procs != nil {
		o := j.runInProcess(jb)
		if jb.release != nil {
			jb.release()
		}
		cancel()
		return o.res, o.err
	}
	if err := j.dispatch(cctx, jb); err != nil {
		if jb.release != nil {
			jb.release()
		}
		cancel()
		return Result{}, err
	}
	select {
	case o := <-jb.out:
		return o.res, o.err
	case <-cctx.Done():
	}
	// Interrupt has been requested; a call in native code may not see it.
	grace := time.NewTimer(interruptGrace)
	defer grace.Stop()
	select {
	case o := <-jb.out:
		return o.res, o.err
	case <-grace.C:
		return Result{}, jb.c.stopped(cctx)
	}
}

// input is what main receives as its first argument.
type input struct {
	Args map[string]any    `json:"args"`
	Env  map[string]string `json:"env"`
	Core Caller            `json:"core"`
	// raw is the input as JSON, as a worker process receives it.
	raw []byte
}

// encodeInput builds the input and bounds its size as JSON before any
// runtime is involved.
func encodeInput(inv *Invocation, limit int) (*input, error) {
	in := &input{Args: inv.Args, Env: make(map[string]string, len(inv.EnvNames)), Core: inv.Caller}
	if in.Args == nil {
		in.Args = map[string]any{}
	}
	for _, name := range inv.EnvNames {
		if v, ok := inv.Env[name]; ok {
			in.Env[name] = v
		}
	}
	// Not json.Marshal: <, > and & stay as they are (the input is never
	// HTML), so that markup in the arguments keeps its size against the
	// bound.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(in)
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if err != nil {
		return nil, fmt.Errorf("fn: encoding the input of %s version %s: %w", inv.Name, inv.Version, err)
	}
	if len(b) > limit {
		return nil, &LimitError{What: "input", Limit: limit}
	}
	// Values json.Marshal encodes but toJS does not know (structs,
	// pointers, typed slices) are brought to JSON shape through the
	// encoding just made.
	if !jsonShaped(in.Args) {
		var shaped struct {
			Args map[string]any `json:"args"`
		}
		if err := json.Unmarshal(b, &shaped); err != nil {
			return nil, fmt.Errorf("fn: encoding the input of %s version %s: %w", inv.Name, inv.Version, err)
		}
		in.Args = shaped.Args
	}
	in.raw = b
	return in, nil
}
