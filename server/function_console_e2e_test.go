package server_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/internal/procstatus"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestFunctionConsoleFlood drives functions that write without bound to
// their console through the real server: 1 GiB of console.log in 1 MiB
// lines, then an answer; and console.log in a loop that never ends.
// Each call ends with a clear answer (the result, or 504 TIMEOUT at the
// function's deadline); the instance's function log keeps the first
// lines up to the output cap (Config.MaxConsoleBytes, each line cut at
// MaxLineBytes) and a note counting the lines dropped; the server's own
// memory never held the output (its peak stays far below 1 GiB); and
// another instance's calls are answered while the flood runs, its log
// untouched. The deadlines are generous (a minute for the call that
// ends by itself): outcomes are asserted, never durations.
//
// hostile checklist 39: 1 GB of console.log → stopped at the output
// cap (or the time-out, 504); another tenant's concurrent requests are
// not affected.
func TestFunctionConsoleFlood(t *testing.T) {
	t.Parallel()
	const lines = 1024 // of 1 MiB: 1 GiB
	for _, tc := range []struct {
		name    string
		src     string
		timeout time.Duration
		// path is where the flood is asked: GraphQL, or the REST door
		// (a field error of GraphQL travels beside the data with 200;
		// REST answers the error's own status).
		path string
		// status and code of the flood's answer ("" code: its result).
		status int
		code   string
	}{
		{
			name: "1 GiB, then an answer",
			src: `exports.main = (input, cb) => {
				const mib = 'x'.repeat(1 << 20);
				for (let i = 0; i < ` + strconv.Itoa(lines) + `; i++) console.log(i + ' ' + mib);
				cb('flooded', null);
			};`,
			timeout: time.Minute,
			path:    "/graphql",
			status:  http.StatusOK,
		},
		{
			name: "without end",
			src: `exports.main = () => {
				const mib = 'x'.repeat(1 << 20);
				for (let i = 0; ; i++) console.log(i + ' ' + mib);
			};`,
			timeout: 10 * time.Second,
			path:    "/rest/v1/fn/query/flood",
			status:  http.StatusGatewayTimeout,
			code:    "TIMEOUT",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := fn.DefaultConfig()
			cfg.Timeout = tc.timeout
			env := servertest.Start(t, servertest.WithFunctionConfig(cfg))
			env.PutRelease("chatty", "v1", `type Query {
  flood: String @fn(name: "flood", version: "v1")
  quick: String @fn(name: "quick", version: "v1")
}`)
			publishFunctions(t, env, "chatty", map[string]string{
				"flood": tc.src,
				"quick": `exports.main = (input, cb) => cb('done', null);`,
			})
			tokA := env.CreateInstance("a.test", "chatty", "v1", tenant.Settings{})
			tokB := env.CreateInstance("b.test", "chatty", "v1", tenant.Settings{})
			instA, _ := env.Directory.Lookup("a.test")

			answer := make(chan graphqlAnswer, 1)
			go func() {
				if tc.path == "/graphql" {
					answer <- postGraphQL(env, "a.test", tokA, "{ flood }")
				} else {
					answer <- getJSON(env, tc.path, "a.test", tokA)
				}
			}()
			// b is served while a's flood runs (or after, when the flood
			// has answered before b's first call: served either way).
			for deadline := time.Now().Add(time.Minute); env.Functions.Calls(instA.ID) < 1 && len(answer) == 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			for i := range 3 {
				if st, body := env.GraphQL("b.test", tokB, "{ quick }", nil); st != http.StatusOK || !strings.Contains(jsonText(body), "done") {
					t.Errorf("b's call %d while a floods: %d %s", i+1, st, jsonText(body))
				}
			}

			a := <-answer
			if a.err != nil {
				t.Fatal(a.err)
			}
			msg, code := servertest.FirstError(a.body)
			switch {
			case a.status != tc.status || code != tc.code:
				t.Errorf("the flood answered %d %s, want %d %s", a.status, jsonText(a.body), tc.status, tc.code)
			case tc.code == "" && !strings.Contains(jsonText(a.body), "flooded"):
				t.Errorf("the flood answered %s, want its result", jsonText(a.body))
			case tc.code != "" && !strings.Contains(msg, "timed out"):
				t.Errorf("the time-out's message is %q, want it to say the function timed out", msg)
			}

			var kept, dropped int
			var notes []string
			for _, e := range functionLog(t, env, "a.test") {
				if e.Level == "runtime" {
					notes = append(notes, e.Message)
					if m := droppedNote.FindStringSubmatch(e.Message); m != nil {
						dropped, _ = strconv.Atoi(m[2])
						if m[1] != strconv.Itoa(cfg.MaxConsoleBytes) {
							t.Errorf("the note names a cap of %s bytes, want %d", m[1], cfg.MaxConsoleBytes)
						}
					}
					continue
				}
				// The first lines, in order, each cut at the line bound.
				if want := fmt.Sprintf("%d xxx", kept); !strings.HasPrefix(e.Message, want) || len(e.Message) > cfg.MaxLineBytes+len("…") {
					t.Errorf("console line %d: %.20q… (%d bytes), want it to begin %q and hold at most %d bytes", kept, e.Message, len(e.Message), want, cfg.MaxLineBytes+len("…"))
				}
				kept++
			}
			if kept*(cfg.MaxLineBytes+len("…")) > cfg.MaxConsoleBytes {
				t.Errorf("the log kept %d console lines, over the cap of %d bytes", kept, cfg.MaxConsoleBytes)
			}
			// A worker that has not answered shortly after the deadline
			// (a loaded machine) is killed, and what its call wrote is
			// lost with it: then the log holds the time-out alone.
			killed := strings.Contains(strings.Join(notes, "\n"), "its worker process was ended")
			switch {
			case tc.code == "" && kept+dropped != lines:
				t.Errorf("%d lines kept and %d counted as dropped, want %d in all; runtime notes %q", kept, dropped, lines, notes)
			case tc.code != "" && !strings.Contains(strings.Join(notes, "\n"), "stopped: function flood version v1 timed out"):
				t.Errorf("the log does not record the time-out; runtime notes %q", notes)
			case tc.code != "" && killed:
				t.Logf("the flood's worker was killed after its deadline: %d console lines reached the log", kept)
			case tc.code != "" && (kept == 0 || dropped == 0):
				t.Errorf("%d lines kept and %d counted as dropped, want both; runtime notes %q", kept, dropped, notes)
			}
			if es := functionLog(t, env, "b.test"); len(es) != 0 {
				t.Errorf("b's function log holds %d entries, want none (its function writes nothing)", len(es))
			}
			if hwm, err := procstatus.Self("VmHWM"); err != nil {
				t.Fatal(err)
			} else if hwm > 512<<20 {
				t.Errorf("the server's process peaked at %d MiB: the function's output reached it", hwm>>20)
			}
		})
	}
}

// getJSON asks path with an instance's domain and token, off the
// test's goroutine.
func getJSON(env *servertest.Env, path, domain, token string) graphqlAnswer {
	return ask(env, http.MethodGet, path, domain, token, nil)
}

// droppedNote is the runtime's note of the console lines a call dropped.
var droppedNote = regexp.MustCompile(`^console output over (\d+) bytes: (\d+) lines dropped$`)

// logEntry is an entry of GET /admin/v1/instances/{domain}/logs.
type logEntry struct {
	Level, Function, Message string
}

// functionLog reads an instance's whole function log through the admin
// API.
func functionLog(t *testing.T, env *servertest.Env, domain string) []logEntry {
	t.Helper()
	st, body := env.Admin(http.MethodGet, "/instances/"+domain+"/logs?limit=10000", nil)
	entries, ok := body["entries"].([]any)
	if st != http.StatusOK || !ok {
		t.Fatalf("reading %s's function log: %d %s", domain, st, jsonText(body))
	}
	var out []logEntry
	for _, e := range entries {
		m, _ := e.(map[string]any)
		l, _ := m["level"].(string)
		f, _ := m["function"].(string)
		msg, _ := m["message"].(string)
		out = append(out, logEntry{l, f, msg})
	}
	return out
}
