package fn

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestContract(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.publishFiles("echo", "v1", testdataFiles(t, "echo"))
	e.publish("payload", "v1", `exports.main = function (input, cb) {
		const p = JSON.parse(input.args.payload);
		cb({ path: p.url.path, n: input.args.n, typeofPayload: typeof input.args.payload }, null);
	};`)
	e.publish("fails", "v1", `exports.main = function (input, cb) { cb(null, { code: 'BAD_SIGNATURE', message: 'signature mismatch' }); };`)
	e.publish("fails-string", "v1", `exports.main = function (input, cb) { cb(null, 'plain text'); };`)
	e.publish("fails-error", "v1", `exports.main = function (input, cb) { const e = new Error('boom'); e.code = 'E_BOOM'; cb(null, e); };`)
	e.publish("async-cb", "v1", `exports.main = async function (input, cb) {
		const v = await Promise.resolve(input.args.n).then((n) => n * 2);
		cb({ doubled: v }, null);
	};`)
	e.publish("async-return", "v1", `exports.main = async (input) => ({ sum: input.args.a + input.args.b });`)
	e.publish("promise-return", "v1", `exports.main = function (input) {
		return new Promise((resolve) => resolve('later')).then((s) => s + '!');
	};`)
	e.publish("sync-return", "v1", `exports.main = function () { return [1, 2, 3]; };`)
	e.publish("undefined-result", "v1", `exports.main = function (input, cb) { cb(undefined, null); };`)
	e.publish("rejects", "v1", `exports.main = async function () { throw new TypeError('bad input'); };`)
	e.publish("throws", "v1", `exports.main = function () { let o; o.x; };`)
	e.publish("silent", "v1", `exports.main = function () {};`)
	e.publish("never", "v1", `exports.main = function () { return new Promise(() => {}); };`)
	e.publish("no-main", "v1", `exports.handler = function () {};`)
	e.publish("twice", "v1", `exports.main = function (i, cb) { cb(1, null); cb(2, null); };`)
	e.publish("throws-at-load", "v1", `throw new Error('load failure'); exports.main = function () {};`)
	e.publishFiles("multi", "v1", map[string]string{
		"package.json":        `{"main": "src/entry"}`,
		"src/entry.js":        `const h = require('./helpers/math'); const d = require('../data/table.json'); const again = require('./helpers/math.js'); exports.main = (i, cb) => cb({ sum: h.add(2, 3), table: d, same: h === again, dirname: __dirname }, null);`,
		"src/helpers/math.js": `exports.add = (a, b) => a + b;`,
		"data/table.json":     `{"rows": [1, 2]}`,
	})
	e.publishFiles("verify-stripe", "v1", testdataFiles(t, "verify-stripe"))

	tests := []struct {
		name    string
		inv     Invocation
		want    string // the result as JSON
		wantErr error
	}{
		{
			name: "args, env filtered to the binding's names, core",
			inv: Invocation{
				Name: "echo", Version: "v1",
				Args:     map[string]any{"s": "x", "n": 2.5, "b": true, "list": []any{"a", nil}},
				Env:      map[string]string{"STRIPE_SECRET": "whsec", "OTHER": "hidden", "EMPTY": ""},
				EnvNames: []string{"STRIPE_SECRET", "EMPTY", "UNSET"},
				Caller:   Caller{AccountID: "acc1", InstanceID: "inst1", Domain: "shop.test", Token: "tok"},
			},
			want: `{"args":{"b":true,"list":["a",null],"n":2.5,"s":"x"},"env":{"EMPTY":"","STRIPE_SECRET":"whsec"},"core":{"account_id":"acc1","domain":"shop.test","instance_id":"inst1","token":"tok"}}`,
		},
		{
			name: "no args and no env are empty objects",
			inv:  Invocation{Name: "echo", Version: "v1", Caller: Caller{InstanceID: "inst1"}},
			want: `{"args":{},"env":{},"core":{"account_id":"","domain":"","instance_id":"inst1","token":""}}`,
		},
		{
			name: "an input-object argument arrives as JSON text",
			inv:  Invocation{Name: "payload", Version: "v1", Args: map[string]any{"payload": `{"url":{"path":"/hook"}}`, "n": 3}},
			want: `{"path":"/hook","n":3,"typeofPayload":"string"}`,
		},
		{name: "callback error {code, message}", inv: Invocation{Name: "fails", Version: "v1"}, wantErr: &FuncError{Code: "BAD_SIGNATURE", Message: "signature mismatch"}},
		{name: "callback error as a string", inv: Invocation{Name: "fails-string", Version: "v1"}, wantErr: &FuncError{Code: DefaultErrorCode, Message: "plain text"}},
		{name: "callback error as an Error with a code", inv: Invocation{Name: "fails-error", Version: "v1"}, wantErr: &FuncError{Code: "E_BOOM", Message: "boom"}},
		{name: "async main calling back after await", inv: Invocation{Name: "async-cb", Version: "v1", Args: map[string]any{"n": 21}}, want: `{"doubled":42}`},
		{name: "async main returning its answer", inv: Invocation{Name: "async-return", Version: "v1", Args: map[string]any{"a": 1, "b": 2}}, want: `{"sum":3}`},
		{name: "returned promise", inv: Invocation{Name: "promise-return", Version: "v1"}, want: `"later!"`},
		{name: "returned value", inv: Invocation{Name: "sync-return", Version: "v1"}, want: `[1,2,3]`},
		{name: "undefined result is null", inv: Invocation{Name: "undefined-result", Version: "v1"}, want: `null`},
		{name: "the first answer counts", inv: Invocation{Name: "twice", Version: "v1"}, want: `1`},
		{name: "require of the package's own files and JSON", inv: Invocation{Name: "multi", Version: "v1"}, want: `{"sum":5,"table":{"rows":[1,2]},"same":true,"dirname":"src"}`},
		{name: "rejected promise", inv: Invocation{Name: "rejects", Version: "v1"}, wantErr: &ExceptionError{Name: "rejects", Version: "v1", Message: "TypeError: bad input"}},
		{name: "exception", inv: Invocation{Name: "throws", Version: "v1"}, wantErr: &ExceptionError{Name: "throws", Version: "v1", Message: "TypeError: Cannot read property 'x' of undefined"}},
		{name: "exception while loading", inv: Invocation{Name: "throws-at-load", Version: "v1"}, wantErr: &ExceptionError{Name: "throws-at-load", Version: "v1", Message: "Error: load failure"}},
		{name: "no answer", inv: Invocation{Name: "silent", Version: "v1"}, wantErr: &ExceptionError{Name: "silent", Version: "v1", Message: "main ended without calling its callback (or returning a value or a promise of one)"}},
		{name: "a promise that cannot settle", inv: Invocation{Name: "never", Version: "v1"}, wantErr: &ExceptionError{Name: "never", Version: "v1", Message: "main ended without calling its callback (or returning a value or a promise of one)"}},
		{name: "no main export", inv: Invocation{Name: "no-main", Version: "v1"}, wantErr: &ExceptionError{Name: "no-main", Version: "v1", Message: "index.js does not export a function main(input, callback)"}},
		{name: "not published", inv: Invocation{Name: "verify", Version: "v1"}, wantErr: &NotPublishedError{App: testApp, Name: "verify", Version: "v1"}},
		{name: "unknown version of a published function", inv: Invocation{Name: "echo", Version: "v2"}, wantErr: &NotPublishedError{App: testApp, Name: "echo", Version: "v2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := e.invoke(tc.inv)
			if tc.wantErr != nil {
				if d := cmp.Diff(tc.wantErr, err); d != "" {
					t.Fatalf("error (-want +got):\n%s\n(%v)", d, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			var want any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, res.Value); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
			if !json.Valid(res.JSON) {
				t.Errorf("Result.JSON is not JSON: %s", res.JSON)
			}
		})
	}
}

func TestNotPublishedMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	_, err := e.invoke(Invocation{Name: "verify", Version: "v1"})
	if got, want := err.Error(), "function verify version v1 is not published"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	errorIs(t, err, ErrNotPublished)
	// Published later, the same binding works at once.
	e.publish("verify", "v1", `exports.main = (i, cb) => cb('ok', null)`)
	res, err := e.invoke(Invocation{Name: "verify", Version: "v1"})
	if err != nil || res.Value != "ok" {
		t.Fatalf("after publishing: %v, %v", res.Value, err)
	}
}

func TestBounds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) {
		c.MaxInputBytes = 200
		c.MaxResultBytes = 100
		c.MaxConsoleBytes = 50
		c.MaxLineBytes = 20
	})
	e.publish("big", "v1", `exports.main = (i, cb) => cb('x'.repeat(200), null);`)
	e.publish("small", "v1", `exports.main = (i, cb) => cb('ok', null);`)
	e.publish("chatty", "v1", `exports.main = (i, cb) => { for (let n = 0; n < 100; n++) console.log('line', n, 'x'.repeat(30)); cb(null, null); };`)
	e.publish("cyclic", "v1", `exports.main = (i, cb) => { const o = {}; o.o = o; cb(o, null); };`)

	_, err := e.invoke(Invocation{Name: "big", Version: "v1"})
	if d := cmp.Diff(&LimitError{What: "result", Limit: 100}, err); d != "" {
		t.Errorf("result over the bound (-want +got):\n%s", d)
	}
	_, err = e.invoke(Invocation{Name: "small", Version: "v1", Args: map[string]any{"s": strings.Repeat("y", 300)}})
	if d := cmp.Diff(&LimitError{What: "input", Limit: 200}, err); d != "" {
		t.Errorf("input over the bound (-want +got):\n%s", d)
	}
	_, err = e.invoke(Invocation{Name: "cyclic", Version: "v1"})
	errorIs(t, err, ErrException)

	if _, err := e.invoke(Invocation{Name: "chatty", Version: "v1", Caller: Caller{InstanceID: "chatty"}}); err != nil {
		t.Fatal(err)
	}
	var kept, notes []string
	for _, l := range e.logLines("chatty") {
		if l.Level == "runtime" {
			notes = append(notes, l.Message)
		} else {
			kept = append(kept, l.Message)
		}
	}
	if d := cmp.Diff([]string{"line 0 xxxxxxxxxxxxx…", "line 1 xxxxxxxxxxxxx…"}, kept); d != "" {
		t.Errorf("console lines kept (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"console output over 50 bytes: 98 lines dropped"}, notes); d != "" {
		t.Errorf("runtime notes (-want +got):\n%s", d)
	}
}

func TestConsole(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.publish("logs", "v1", `exports.main = (i, cb) => {
		console.log('plain', 1, true, null, undefined, {a: [1]});
		console.info('%s is %d years and %j', 'Ann', 42.9, {x: 1}, 'extra');
		console.warn('careful');
		console.error(new RangeError('broken'));
		require('console').debug('through require');
		require('node:console').log('through node:console');
		Promise.reject(new Error('forgotten'));
		cb(null, null);
	};`)
	e.publish("throws", "v1", `exports.main = () => { function inner() { throw new Error('deep'); } inner(); };`)
	if _, err := e.invoke(Invocation{Name: "logs", Version: "v1", Caller: Caller{InstanceID: "i-logs"}}); err != nil {
		t.Fatal(err)
	}
	_, err := e.invoke(Invocation{Name: "throws", Version: "v1", Caller: Caller{InstanceID: "i-logs"}})
	errorIs(t, err, ErrException)
	if strings.Contains(err.Error(), "inner") || strings.Contains(err.Error(), "index.js:") {
		t.Errorf("the error shows the stack: %q", err.Error())
	}

	type line struct{ Level, Function, Message string }
	var got []line
	calls := map[string]bool{}
	for _, l := range e.logLines("i-logs") {
		msg := l.Message
		if i := strings.Index(msg, "\n"); i >= 0 {
			msg = msg[:i] + " …"
		}
		got = append(got, line{l.Level, l.Function, msg})
		calls[l.Call] = true
	}
	want := []line{
		{"log", "logs@v1", `plain 1 true null undefined {"a":[1]}`},
		{"info", "logs@v1", `Ann is 42.9 years and {"x":1} extra`},
		{"warn", "logs@v1", "careful"},
		{"error", "logs@v1", "RangeError: broken …"},
		{"debug", "logs@v1", "through require"},
		{"log", "logs@v1", "through node:console"},
		{"runtime", "logs@v1", "unhandled promise rejection: Error: forgotten"},
		{"runtime", "throws@v1", "uncaught exception: Error: deep …"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("log (-want +got):\n%s", d)
	}
	if len(calls) != 2 {
		t.Errorf("%d call ids, want 2 (one per call)", len(calls))
	}
	// The stack of the exception is in the log, for the developer.
	es := e.logLines("i-logs")
	if last := es[len(es)-1].Message; !strings.Contains(last, "at inner") {
		t.Errorf("the log keeps no stack: %q", last)
	}
}

func TestCanceled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.publish("spin", "v1", `exports.main = () => { for (;;) {} };`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.js.Invoke(ctx, Invocation{App: testApp, Name: "spin", Version: "v1"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

// TestWarmCallsCompileNothing: the modules of a version are compiled once
// and shared by later calls, on fresh runtimes each time.
func TestWarmCallsCompileNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, inline)
	e.publishFiles("verify-stripe", "v1", testdataFiles(t, "verify-stripe"))
	payload := mustJSON(t, map[string]any{"headers": map[string]any{}, "body": "{}"})
	call := func() {
		t.Helper()
		if _, err := e.invoke(Invocation{Name: "verify-stripe", Version: "v1", Args: map[string]any{"payload": payload},
			Env: map[string]string{"STRIPE_SECRET": "s"}, EnvNames: []string{"STRIPE_SECRET"}}); err != nil {
			t.Fatal(err)
		}
	}
	call()
	pkg, err := e.pk.Load(context.Background(), testApp, "verify-stripe", "v1")
	if err != nil {
		t.Fatal(err)
	}
	cold := pkg.reads.Load()
	if cold == 0 {
		t.Fatal("the first call read no source")
	}
	for range 5 {
		call()
	}
	if warm := pkg.reads.Load() - cold; warm != 0 {
		t.Errorf("warm calls read %d sources, want 0", warm)
	}
}
