package fn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/require"

	"github.com/corehq/core/store"
)

// call is the state of one invocation. Everything but queue and
// finished belongs to the goroutine running the call's runtime. The
// call's context is passed to run, which hands it to what needs it.
type call struct {
	j     *JS
	vm    *goja.Runtime
	pkg   *Package
	inv   *Invocation
	start time.Time

	// queue carries work from other goroutines (fetch completions) to the
	// runtime's goroutine; finished is closed when the call ends, so that
	// senders never block forever.
	queue    chan func() error
	finished chan struct{}
	pending  int // async operations whose completion is still to come
	fetches  int // fetches started

	graphqlCalls int // core.graphql requests made

	answered bool
	result   []byte // the answer's JSON
	fnErr    error  // the function's own error, or a bad answer

	// The runtime's own JSON functions, taken before the function runs:
	// a function replacing JSON.stringify must not change how its
	// answer is read.
	jsonObj            *goja.Object
	stringifyF, parseF goja.Callable

	console    consoleState
	id         string
	returned   *goja.Promise // what main returned, when a promise
	rejections []*goja.Promise
}

func newCall(j *JS, pkg *Package, inv *Invocation) *call {
	return &call{
		j: j, pkg: pkg, inv: inv, start: time.Now(),
		queue:    make(chan func() error),
		finished: make(chan struct{}),
	}
}

// interrupted is the value a call's runtime is interrupted with.
type interrupted struct{}

func (interrupted) String() string { return "call stopped" }

// run executes the call on its own runtime and returns its outcome; the
// call stops when ctx ends.
func (c *call) run(ctx context.Context, input *input) (o outcome) {
	defer close(c.finished)
	defer func() {
		if x := recover(); x != nil {
			c.note("internal error: %v\n%s", x, debug.Stack())
			o = outcome{err: &ExceptionError{Name: c.inv.Name, Version: c.inv.Version, Message: "internal error in the function runtime"}}
		}
	}()
	c.vm = c.j.newRuntime()
	vm := c.vm
	stop := context.AfterFunc(ctx, func() { vm.Interrupt(interrupted{}) })
	defer stop()
	vm.SetPromiseRejectionTracker(c.trackRejection)

	rm := c.pkg.reg.Enable(vm)
	c.installGlobals(ctx, rm)

	in := inputValue(vm, input)
	exports, err := rm.Require("./" + c.pkg.Main)
	if err != nil {
		return c.failed(ctx, err)
	}
	var mainFn goja.Callable
	if obj, ok := exports.(*goja.Object); ok {
		mainFn, _ = goja.AssertFunction(obj.Get("main"))
	}
	if mainFn == nil {
		return c.exception(fmt.Sprintf("%s does not export a function main(input, callback)", c.pkg.Main))
	}
	ret, err := mainFn(goja.Undefined(), in, vm.ToValue(c.callback))
	if err != nil {
		return c.failed(ctx, err)
	}
	return c.wait(ctx, ret)
}

// wait runs the call's loop until it has an answer: async completions
// are run on this goroutine, promise jobs run after each.
func (c *call) wait(ctx context.Context, ret goja.Value) outcome {
	p, isPromise := ret.Export().(*goja.Promise)
	c.returned = p
	for {
		if c.answered {
			return c.answer()
		}
		if isPromise && p.State() == goja.PromiseStateRejected {
			return c.thrown(p.Result())
		}
		if c.pending == 0 {
			// Nothing can happen any more: take a returned value (or what
			// a returned promise fulfilled with) as the answer.
			v := ret
			if isPromise {
				v = nil
				if p.State() == goja.PromiseStateFulfilled {
					v = p.Result()
				}
			}
			if v != nil && !goja.IsUndefined(v) {
				c.settle(v, goja.Null())
				return c.answer()
			}
			return c.exception("main ended without calling its callback (or returning a value or a promise of one)")
		}
		select {
		case f := <-c.queue:
			c.pending--
			if err := f(); err != nil {
				return c.failed(ctx, err)
			}
		case <-ctx.Done():
			return outcome{err: c.stopped(ctx)}
		}
	}
}

// post hands f to the call's goroutine; false when the call has ended.
func (c *call) post(f func() error) bool {
	select {
	case c.queue <- f:
		return true
	case <-c.finished:
		return false
	}
}

// callback is the function's callback(result, error).
func (c *call) callback(fc goja.FunctionCall) goja.Value {
	if c.answered {
		c.note("callback called again; only the first answer counts")
		return goja.Undefined()
	}
	c.settle(fc.Argument(0), fc.Argument(1))
	return goja.Undefined()
}

// settle records the answer: the error when one is given, else the
// result as JSON.
func (c *call) settle(result, errv goja.Value) {
	c.answered = true
	if !isNullish(errv) {
		c.fnErr = c.funcError(errv)
		return
	}
	s, err := c.stringify(result)
	switch {
	case err != nil:
		c.fnErr = &ExceptionError{Name: c.inv.Name, Version: c.inv.Version, Message: "the result cannot be encoded as JSON: " + firstLine(err.Error())}
		c.note("the result cannot be encoded as JSON: %v", err)
	case len(s) > c.j.cfg.MaxResultBytes:
		c.fnErr = &LimitError{What: "result", Limit: c.j.cfg.MaxResultBytes}
		c.note("the result is larger than %d bytes", c.j.cfg.MaxResultBytes)
	default:
		c.result = []byte(s)
	}
}

// answer turns the recorded answer into the call's outcome.
func (c *call) answer() outcome {
	if c.fnErr != nil {
		return outcome{err: c.fnErr}
	}
	var v any
	if err := json.Unmarshal(c.result, &v); err != nil {
		return c.exception("the result cannot be decoded: " + err.Error())
	}
	return outcome{res: Result{Value: v, JSON: c.result, Duration: time.Since(c.start)}}
}

// Bounds of a function's own error.
const (
	maxCodeLen    = 64
	maxMessageLen = 1024
)

// funcError reads the function's error: {code, message}, an Error, or
// any value (its string form is the message).
func (c *call) funcError(v goja.Value) *FuncError {
	e := &FuncError{Code: DefaultErrorCode}
	if obj, ok := v.(*goja.Object); ok {
		if code := obj.Get("code"); !isNullish(code) {
			e.Code = cut(code.String(), maxCodeLen)
		}
		if msg := obj.Get("message"); !isNullish(msg) {
			e.Message = cut(msg.String(), maxMessageLen)
			return e
		}
		if s, err := c.stringify(v); err == nil {
			e.Message = cut(s, maxMessageLen)
			return e
		}
	}
	e.Message = cut(v.String(), maxMessageLen)
	return e
}

// stringify is JSON.stringify(v), "null" for undefined. Primitives are
// encoded here; objects with the runtime's JSON (a function that replaces
// JSON.stringify changes only its own answer, which is still checked to
// be JSON).
func (c *call) stringify(v goja.Value) (string, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return "null", nil
	}
	if _, isObj := v.(*goja.Object); !isObj {
		switch x := v.Export().(type) {
		case string:
			b, err := json.Marshal(x)
			return string(b), err
		case bool:
			return strconv.FormatBool(x), nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return "null", nil // as JSON.stringify does
			}
			b, err := json.Marshal(x)
			return string(b), err
		}
	}
	j, ok := c.vm.Get("JSON").(*goja.Object)
	if !ok {
		return "", errors.New("JSON was replaced")
	}
	f, ok := goja.AssertFunction(j.Get("stringify"))
	if !ok {
		return "", errors.New("JSON.stringify was replaced")
	}
	s, err := f(j, v)
	if err != nil {
		return "", err
	}
	if goja.IsUndefined(s) {
		return "null", nil
	}
	return s.String(), nil
}

// parseJSON is JSON.parse(s) with the runtime's own JSON.
func (c *call) parseJSON(s string) (goja.Value, error) {
	j, ok := c.vm.Get("JSON").(*goja.Object)
	if !ok {
		return nil, errors.New("JSON was replaced")
	}
	f, ok := goja.AssertFunction(j.Get("parse"))
	if !ok {
		return nil, errors.New("JSON.parse was replaced")
	}
	return f(j, c.vm.ToValue(s))
}

// failed turns an error from the runtime into the call's outcome.
func (c *call) failed(ctx context.Context, err error) outcome {
	var (
		intr *goja.InterruptedError
		so   *goja.StackOverflowError
		exc  *goja.Exception
	)
	switch {
	case errors.As(err, &intr):
		return outcome{err: c.stopped(ctx)}
	case errors.As(err, &so):
		c.note("uncaught exception: RangeError: Maximum call stack size exceeded")
		return outcome{err: &ExceptionError{Name: c.inv.Name, Version: c.inv.Version, Message: "RangeError: Maximum call stack size exceeded"}}
	case errors.As(err, &exc):
		return c.thrown(exc)
	default:
		// A module that fails to resolve or compile.
		c.note("loading the function failed: %v", err)
		return outcome{err: &ExceptionError{Name: c.inv.Name, Version: c.inv.Version, Message: firstLine(err.Error())}}
	}
}

// thrown reports an exception or rejection: its one-line message to the
// caller, its stack to the function log.
func (c *call) thrown(v any) outcome {
	var msg, full string
	switch x := v.(type) {
	case *goja.Exception:
		msg, full = c.describe(x.Value()), x.String()
	case goja.Value:
		msg = c.describe(x)
		full = msg
		if obj, ok := x.(*goja.Object); ok {
			if st := obj.Get("stack"); !isNullish(st) {
				full = st.String()
			}
		}
	}
	c.note("uncaught exception: %s", full)
	return outcome{err: &ExceptionError{Name: c.inv.Name, Version: c.inv.Version, Message: msg}}
}

// describe is the one-line form of a thrown value.
func (c *call) describe(v goja.Value) string {
	if v == nil {
		return "exception"
	}
	s := v.String()
	if obj, ok := v.(*goja.Object); ok && s == "[object Object]" {
		if j, err := c.stringify(obj); err == nil {
			s = j
		}
	}
	return cut(firstLine(s), maxMessageLen)
}

// exception is a failure the runtime diagnoses itself.
func (c *call) exception(msg string) outcome {
	c.note("%s", msg)
	return outcome{err: &ExceptionError{Name: c.inv.Name, Version: c.inv.Version, Message: msg}}
}

// stopped is the error of a call whose context ended: a time-out when
// the call's deadline (or the caller's) passed, else the cancellation.
func (c *call) stopped(ctx context.Context) error {
	cause := context.Cause(ctx)
	var mem *memoryExceeded
	if errors.As(cause, &mem) {
		return &ResourceError{Name: c.inv.Name, Version: c.inv.Version, Limit: mem.limit}
	}
	if timedOut(ctx) {
		return &TimeoutError{Name: c.inv.Name, Version: c.inv.Version, After: time.Since(c.start).Round(time.Millisecond)}
	}
	return fmt.Errorf("fn: call of %s version %s canceled: %w", c.inv.Name, c.inv.Version, ctx.Err())
}

// trackRejection remembers promises rejected with no handler, to log
// the ones still unhandled when the call ends.
func (c *call) trackRejection(p *goja.Promise, op goja.PromiseRejectionOperation) {
	switch op {
	case goja.PromiseRejectionReject:
		if len(c.rejections) < 16 {
			c.rejections = append(c.rejections, p)
		}
	case goja.PromiseRejectionHandle:
		for i, q := range c.rejections {
			if q == p {
				c.rejections = append(c.rejections[:i], c.rejections[i+1:]...)
				break
			}
		}
	}
}

// finish writes the call's log entries: console output and notes.
func (c *call) finish(err error) {
	var (
		te *TimeoutError
		re *ResourceError
	)
	if errors.As(err, &te) || errors.As(err, &re) {
		c.note("stopped: %s", err.Error())
	}
	for _, p := range c.rejections {
		if p != c.returned && p.State() == goja.PromiseStateRejected {
			c.note("unhandled promise rejection: %s", c.describe(p.Result()))
		}
	}
	if c.console.dropped > 0 {
		c.note("console output over %d bytes: %d lines dropped", c.j.cfg.MaxConsoleBytes, c.console.dropped)
	}
	if len(c.console.entries) > 0 && c.j.logs != nil && c.inv.Caller.InstanceID != "" {
		c.j.logs.Append(c.inv.Caller.InstanceID, c.console.entries)
	}
}

// note adds a runtime note to the call's log (not bounded by the
// console limit; the runtime writes a handful per call at most).
func (c *call) note(format string, args ...any) {
	c.console.entries = append(c.console.entries, c.entry("runtime", cut(fmt.Sprintf(format, args...), 16<<10)))
}

func (c *call) entry(level, msg string) LogEntry {
	if c.id == "" {
		c.id = store.NewID()
	}
	return LogEntry{Time: time.Now().UTC(), Level: level, Function: c.inv.Name + "@" + c.inv.Version, Call: c.id, Message: msg}
}

// installGlobals gives the runtime what a function may use beyond the
// language: console, require (own files and crypto, buffer, util), a
// lazily loaded Buffer, fetch and core (core.graphql). There is no
// process, no file system and no timer.
func (c *call) installGlobals(ctx context.Context, rm *require.RequireModule) {
	vm := c.vm
	g := vm.GlobalObject()
	must(g.Set("require", c.requireFunc(rm)))
	must(g.Set("fetch", func(fc goja.FunctionCall) goja.Value { return c.fetch(ctx, fc) }))
	// Built on first use: most calls touch few of them.
	c.lazyGlobal("console", func() goja.Value { return c.newConsole() })
	c.lazyGlobal("core", func() goja.Value { return c.newCore(ctx) })
	c.lazyGlobal("Buffer", func() goja.Value {
		mod, err := rm.Require("buffer")
		if err != nil {
			panic(vm.NewGoError(err))
		}
		return mod.ToObject(vm).Get("Buffer")
	})
}

// lazyGlobal defines a global that is built when first read; assigning
// it first replaces it unbuilt. Either way it then becomes a plain,
// writable, non-enumerable global like the built-ins.
func (c *call) lazyGlobal(name string, build func() goja.Value) {
	g := c.vm.GlobalObject()
	settle := func(v goja.Value) goja.Value {
		must(g.DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
		return v
	}
	must(g.DefineAccessorProperty(name,
		c.vm.ToValue(func(goja.FunctionCall) goja.Value { return settle(build()) }),
		c.vm.ToValue(func(fc goja.FunctionCall) goja.Value { settle(fc.Argument(0)); return goja.Undefined() }),
		goja.FLAG_TRUE, goja.FLAG_FALSE))
}

// requireFunc wraps goja_nodejs's require: refused core modules and
// missing files answer a clear error naming the module.
func (c *call) requireFunc(rm *require.RequireModule) func(goja.FunctionCall) goja.Value {
	vm := c.vm
	return func(fc goja.FunctionCall) goja.Value {
		name := fc.Argument(0).String()
		if refused(name) {
			panic(vm.NewGoError(&moduleError{name: strings.TrimPrefix(name, "node:")}))
		}
		v, err := rm.Require(name)
		if err == nil {
			return v
		}
		var (
			exc  *goja.Exception
			intr *goja.InterruptedError
			so   *goja.StackOverflowError
		)
		switch {
		case errors.As(err, &exc):
			panic(exc)
		case errors.As(err, &intr):
			panic(intr)
		case errors.As(err, &so):
			panic(so)
		case errors.Is(err, require.InvalidModuleError), errors.Is(err, require.IllegalModuleNameError),
			errors.Is(err, require.NoSuchBuiltInModuleError):
			panic(vm.NewGoError(fmt.Errorf("cannot find module %q: a function may require files of its own package (./file), its node_modules, and crypto, buffer and util", name)))
		default:
			panic(vm.NewGoError(fmt.Errorf("loading module %q: %v", name, err)))
		}
	}
}

func refused(name string) bool {
	name = strings.TrimPrefix(name, "node:")
	for _, r := range refusedModules {
		if name == r {
			return true
		}
	}
	return false
}

func isNullish(v goja.Value) bool {
	return v == nil || goja.IsUndefined(v) || goja.IsNull(v)
}

// must panics on an error that cannot happen on a plain object of a
// runtime we own (Set and Define fail only on frozen objects).
func must(err error) {
	if err != nil {
		panic(err)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// cut shortens s to at most n bytes, on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && i < len(s) && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
