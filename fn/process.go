package fn

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/corehq/core/internal/periodic"
)

// With Config.Processes, calls run in worker processes: this binary
// started again with workerEnv set (worker.go), which runs one call at a
// time on its own embedded runtime and answers over pipes (wire.go).
// The calling goroutine drives the process itself (no goroutine stands
// between the caller, the pipe and the answer); idle processes wait in
// the pool for the next call, and at most Config.MaxConcurrent exist. A
// process that dies, or is killed because its call would not stop, is
// replaced at the next call.
//
// What an idle pool holds is bounded: a worker that grew more than
// workerRetire past its start size says so with its answer and is ended
// (a call that allocated much leaves its garbage in its process until
// the operating system takes the pages back, which an idle Go process
// does slowly); the Config.IdleWorkers used last are kept up to a minute
// idle, the others Config.WorkerLinger. So a minute after a burst no
// worker is left, and WorkerLinger after it at most IdleWorkers, each
// within workerRetire of its start size.
//
// What a process gives that a goroutine cannot: a call's memory is its
// process's, so a call that grows past its bound is stopped (the
// worker's memory watch) and one that allocates faster than the watch
// can see meets the operating system's limit (RLIMIT_DATA) and ends its
// process alone; the service's own memory never holds a function's
// heap. A call stuck in native code past its deadline is killed rather
// than abandoned. Everything else is the same code as an in-process
// call: the worker's runtime is a JS with one worker.

// processPool keeps the idle worker processes.
type processPool struct {
	slots  chan struct{} // one per process that may exist (MaxConcurrent)
	keep   int           // Config.IdleWorkers
	linger time.Duration // Config.WorkerLinger
	mu     sync.Mutex
	idle   []*process // most recently used last
	done   bool
	stop   context.CancelFunc // ends the reaper
	wg     sync.WaitGroup
}

func newProcessPool(cfg Config) *processPool {
	ctx, stop := context.WithCancel(context.Background())
	pp := &processPool{slots: make(chan struct{}, cfg.MaxConcurrent), keep: cfg.IdleWorkers, linger: cfg.WorkerLinger, stop: stop}
	pp.wg.Add(1)
	go func() {
		defer pp.wg.Done()
		periodic.Run(ctx, min(pp.linger, workerIdle)/4, pp.reap, nil)
	}()
	return pp
}

// runInProcess runs a job on the calling goroutine in an idle worker
// process, or a new one, waiting for room until the call's deadline.
func (j *JS) runInProcess(jb *job) outcome {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return outcome{err: ErrClosed}
	}
	j.calls.Add(1) // Close waits for it
	j.mu.Unlock()
	defer j.calls.Done()
	pp := j.procs
	select {
	case pp.slots <- struct{}{}: // room now: taken even if the deadline is passing
	default:
		if err := pp.room(j, jb); err != nil {
			return outcome{err: err}
		}
	}
	p := pp.take()
	for attempt := 1; p == nil; attempt++ {
		var err error
		if p, err = j.startProcess(); err != nil && attempt == startAttempts {
			<-pp.slots
			jb.c.note("starting a worker process failed: %v", err)
			jb.c.finish(nil)
			return outcome{err: fmt.Errorf("fn: starting a worker process: %w", err)}
		}
	}
	o, alive := p.run(j, jb)
	switch {
	case !alive:
		p.wait()
		<-pp.slots
	case p.retire:
		pp.retire(j, p)
	default:
		pp.put(p)
	}
	return o
}

// retire ends a process that holds more memory than an idle one may
// keep (the worker said so with its answer), out of the caller's way:
// the caller has its answer. Its slot frees once it has ended, so that
// no more than MaxConcurrent processes exist at once.
func (pp *processPool) retire(j *JS, p *process) {
	j.calls.Add(1) // Close waits for it; the caller still holds its own count
	go func() {
		defer j.calls.Done()
		p.close()
		<-pp.slots
	}()
}

// room waits for room for another process until the call's deadline.
func (pp *processPool) room(j *JS, jb *job) error {
	select {
	case pp.slots <- struct{}{}:
		return nil
	case <-jb.ctx.Done():
		if errors.Is(context.Cause(jb.ctx), errDeadline) {
			return ErrBusy
		}
		return fmt.Errorf("fn: waiting for a runtime: %w", jb.ctx.Err())
	case <-j.stop:
		return ErrClosed
	}
}

// take returns the idle process used last, or nil.
func (pp *processPool) take() *process {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if n := len(pp.idle); n > 0 {
		p := pp.idle[n-1]
		pp.idle = pp.idle[:n-1]
		return p
	}
	return nil
}

// put returns a process to the pool (and its slot), or ends it when the
// pool is closed.
func (pp *processPool) put(p *process) {
	p.lastUsed = time.Now()
	pp.mu.Lock()
	if pp.done {
		pp.mu.Unlock()
		p.close()
		<-pp.slots
		return
	}
	pp.idle = append(pp.idle, p)
	pp.mu.Unlock()
	<-pp.slots
}

// reap ends the processes idle for workerIdle, and those idle for
// linger but the keep used last.
func (pp *processPool) reap(context.Context) error {
	now := time.Now()
	pp.mu.Lock()
	var old []*process
	extra := len(pp.idle) - pp.keep // the first ones, used longest ago
	keep := pp.idle[:0]
	for i, p := range pp.idle {
		if idle := now.Sub(p.lastUsed); idle >= workerIdle || i < extra && idle >= pp.linger {
			old = append(old, p)
		} else {
			keep = append(keep, p)
		}
	}
	pp.idle = keep
	pp.mu.Unlock()
	for _, p := range old {
		p.close()
	}
	return nil
}

// close ends the idle processes; busy ones end when their call does.
// Close of JS waits for the calls in flight first.
func (pp *processPool) close() {
	pp.mu.Lock()
	pp.done = true
	idle := pp.idle
	pp.idle = nil
	pp.mu.Unlock()
	pp.stop()
	pp.wg.Wait()
	for _, p := range idle {
		p.close()
	}
}

// process is the service's end of a worker process. Its frames are read
// by the worker goroutine that owns it, in the call it runs: no
// goroutine stands between the pipe and the call.
type process struct {
	cmd         *exec.Cmd
	stdin       io.Closer
	stdout      io.Closer
	r           *bufio.Reader
	frameWriter // to the worker
	stderr      *headBuffer

	// mu guards killed: a kill decided by a timer after its call ended
	// must not hit the next call.
	mu      sync.Mutex
	running uint64 // the call running, counted from 1; 0 between calls
	calls   uint64
	killed  bool
	exit    error // once the process was waited for
	waited  bool
	// retire: the last call's answer said the worker grew past what an
	// idle one may hold; it is ended rather than kept.
	retire bool

	lastUsed time.Time // when it went back to the pool
}

// workerStop is how long a worker may take to end after its input
// closes before it is killed.
const workerStop = time.Second

// startProcess starts a worker process and configures it.
func (j *JS) startProcess() (*process, error) {
	cmd := exec.Command(workerExecutable)
	cmd.Env = []string{workerEnv + "=" + workerProtocol}
	if dir := os.Getenv("GOCOVERDIR"); dir != "" {
		cmd.Env = append(cmd.Env, "GOCOVERDIR="+dir)
	}
	// Blocking pipes: a read waits in the kernel and its thread runs on
	// as soon as the answer is written, without the network poller's
	// wake-ups.
	stdinR, stdin, err := blockingPipe()
	if err != nil {
		return nil, err
	}
	stdout, stdoutW, err := blockingPipe()
	if err != nil {
		stdinR.Close()
		stdin.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = stdinR, stdoutW
	p := &process{cmd: cmd, stdin: stdin, stdout: stdout, r: bufio.NewReader(stdout), frameWriter: frameWriter{w: bufio.NewWriter(stdin)},
		stderr: &headBuffer{max: 4 << 10}}
	cmd.Stderr = p.stderr
	err = cmd.Start()
	stdinR.Close() // the worker's ends
	stdoutW.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		return nil, err
	}
	if err := p.send(frameHello, workerHello{Config: j.cfg}); err != nil {
		p.kill()
		return nil, err
	}
	// A worker that cannot start says so before any call is given to it.
	if kind, _, err := readFrame(p.r); err != nil || kind != frameReady {
		p.kill()
		return nil, fmt.Errorf("the worker process did not start (%v: %s)", p.exit, cut(firstLine(p.stderr.String()), 200))
	}
	return p, nil
}

// startAttempts is how many times a call tries to start a worker process:
// a start that fails (the machine short of something for a moment) is
// tried again before the call fails.
const startAttempts = 2

// kill ends the process at once and waits for it.
func (p *process) kill() {
	p.mu.Lock()
	p.killed = true
	p.mu.Unlock()
	_ = p.cmd.Process.Kill()
	p.wait()
}

// killCall kills the process if call is still the one it runs.
func (p *process) killCall(call uint64) {
	p.mu.Lock()
	if p.running != call || p.killed {
		p.mu.Unlock()
		return
	}
	p.killed = true
	p.mu.Unlock()
	_ = p.cmd.Process.Kill() // the call's read ends; run waits
}

// close asks the process to end (its input closes) and kills it if it
// does not.
func (p *process) close() {
	_ = p.stdin.Close()
	t := time.AfterFunc(workerStop, func() { _ = p.cmd.Process.Kill() })
	defer t.Stop()
	p.wait()
}

// wait reaps the process (once its output has ended or it was killed).
func (p *process) wait() {
	if p.waited {
		return
	}
	p.waited = true
	_, _ = io.Copy(io.Discard, p.r) // until the worker's end closes
	p.exit = p.cmd.Wait()
	_ = p.stdout.Close()
	_ = p.stdin.Close()
}

// run hands a job to the process and serves its requests until it
// answers; alive is false when the process died or was killed. The
// worker stops a call at its deadline itself; one that has not answered
// interruptGrace later (native code) is killed, and so is one whose
// caller went away (its context canceled).
func (p *process) run(j *JS, jb *job) (o outcome, alive bool) {
	c := jb.c
	limit := j.cfg.memoryOf(c.inv.Memory)
	p.mu.Lock()
	p.calls++
	call := p.calls
	p.running = call
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.running = 0
		p.mu.Unlock()
	}()
	stop := context.AfterFunc(jb.ctx, func() {
		if !timedOut(jb.ctx) {
			p.killCall(call)
			return
		}
		time.AfterFunc(interruptGrace, func() { p.killCall(call) })
	})
	defer stop()

	cf := callFrame{App: c.pkg.App, Name: c.pkg.Name, Version: c.pkg.Version, SHA256: c.pkg.SHA256,
		Input: jb.in.raw, Fetch: c.inv.Fetch, GraphQL: c.inv.GraphQL != nil,
		Timeout: time.Until(deadlineOf(jb.ctx)), Memory: limit}
	if err := p.sendRaw(frameCall, cf.encode()); err != nil {
		return p.died(c, jb.ctx, limit), false
	}
	for {
		kind, body, err := readFrame(p.r)
		if err != nil {
			return p.died(c, jb.ctx, limit), false
		}
		switch kind {
		case framePackage:
			err := p.send(framePackage, packageFrame{App: c.pkg.App, Name: c.pkg.Name, Version: c.pkg.Version,
				SHA256: c.pkg.SHA256, Main: c.pkg.Main, Files: c.pkg.files})
			if err != nil {
				return p.died(c, jb.ctx, limit), false
			}
		case frameGraphQL:
			var req graphqlRequest
			switch {
			case json.Unmarshal(body, &req) != nil:
			case req.Replay != nil:
				// The instance is the call's, never the worker's word.
				fresh, err := j.replays.remember(c.inv.Caller.InstanceID, req.Replay.ID, req.Replay.Until, time.Now())
				rep := graphqlReply{ID: req.ID, Response: json.RawMessage(strconv.FormatBool(fresh))}
				if err != nil {
					rep = graphqlReply{ID: req.ID, Error: err.Error()}
				}
				_ = p.send(frameGraphQL, rep)
			case c.inv.GraphQL != nil:
				go p.graphql(jb.ctx, c, req)
			}
		case frameDone:
			return p.answer(jb, body), true
		}
	}
}

// graphql runs a core.graphql request of the worker's call as the
// caller, one call deeper, and answers it.
func (p *process) graphql(ctx context.Context, c *call, req graphqlRequest) {
	ctx = context.WithValue(ctx, depthKey{}, depthOf(ctx)+1)
	res, err := c.callHost(ctx, req.Query, req.Variables)
	rep := graphqlReply{ID: req.ID, Response: res}
	if err != nil {
		rep = graphqlReply{ID: req.ID, Error: err.Error()}
	}
	_ = p.send(frameGraphQL, rep) // a worker gone since has no use for it
}

// answer reads the worker's done frame into the call's outcome and
// writes the call's log.
func (p *process) answer(jb *job, body []byte) outcome {
	c := jb.c
	var d doneFrame
	if err := d.decode(body); err != nil {
		p.retire = true // a worker that cannot be understood is not kept
		return c.exception("the worker's answer cannot be read: " + err.Error())
	}
	p.retire = d.Retire
	c.console.entries = append(c.console.entries, d.Log...)
	c.finish(nil)
	if d.Err != nil {
		if d.Err.Kind == "canceled" && jb.ctx.Err() != nil {
			return outcome{err: c.stopped(jb.ctx)}
		}
		return outcome{err: d.Err.err()}
	}
	var v any
	if err := json.Unmarshal(d.Result, &v); err != nil {
		return c.exception("the result cannot be decoded: " + err.Error())
	}
	return outcome{res: Result{Value: v, JSON: d.Result, Duration: d.Duration}}
}

// died is the outcome of a call whose worker process ended under it: out
// of memory (the Go runtime says so on stderr), killed at the call's
// deadline or cancellation, or a failure the function log records.
func (p *process) died(c *call, ctx context.Context, limit int64) outcome {
	p.mu.Lock()
	killed := p.killed
	p.mu.Unlock()
	if !killed {
		_ = p.cmd.Process.Kill() // a broken pipe: make sure it is gone
	}
	p.wait()
	var err error
	switch {
	case p.outOfMemory():
		err = &ResourceError{Name: c.inv.Name, Version: c.inv.Version, Limit: limit}
		c.note("stopped: %s (its worker process ran out of memory)", err)
	case ctx.Err() != nil:
		err = c.stopped(ctx)
		c.note("stopped: %s (its worker process was ended)", err)
	default:
		err = &ExceptionError{Name: c.inv.Name, Version: c.inv.Version, Message: fmt.Sprintf("the worker process running the function ended (%v: %s)", p.exit, cut(firstLine(p.stderr.String()), 200))}
		c.note("the worker process running the call ended: %v\n%s", p.exit, p.stderr.String())
	}
	c.finish(nil)
	return outcome{err: err}
}

// outOfMemory tells whether the process ended for want of memory, as the
// Go runtime or the race detector (in a test build) words it when the
// operating system refuses it memory or a thread's stack under
// RLIMIT_DATA.
func (p *process) outOfMemory() bool {
	for _, s := range oomWords {
		if p.stderr.contains(s) {
			return true
		}
	}
	return false
}

// oomWords are what a worker's stderr says when memory ran out: "fatal
// error: runtime: out of memory", "runtime: cannot allocate memory",
// "failed to create new OS thread" (its stack is data too), the race
// detector's "failed to allocate … (errno: 12)".
var oomWords = []string{"out of memory", "cannot allocate", "failed to allocate", "failed to create new OS thread", "errno: 12", "errno=12"}

// timedOut tells whether ctx ended at the call's deadline (or the
// caller's) rather than by cancellation.
func timedOut(ctx context.Context) bool {
	cause := context.Cause(ctx)
	return errors.Is(cause, errDeadline) || errors.Is(cause, context.DeadlineExceeded)
}

// deadlineOf is ctx's deadline; calls always have one (Invoke).
func deadlineOf(ctx context.Context) time.Time {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Now().Add(time.Hour)
	}
	return d
}

// headBuffer keeps the first max bytes written to it: a worker's
// stderr, where the Go runtime's fatal error comes first and goroutine
// stacks follow.
type headBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (h *headBuffer) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

func (h *headBuffer) contains(s string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return bytes.Contains(h.b, []byte(s))
}

func (h *headBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return string(h.b)
}
