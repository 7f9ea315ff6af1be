package main

import (
	"flag"
	"strings"
	"testing"

	"github.com/corehq/core/server/servertest"
)

// e2e runs the harness end to end on a cored it builds and starts, as the
// README's command does (heavy: a go build and a real server); off by
// default: go test ./cmd/corebench -run E2E -e2e -v
var e2e = flag.Bool("e2e", false, "run the end-to-end test: build cored, start it and run the load test and scale parts with small counts")

// testWriter sends the harness's progress lines to the test log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// tinyConfig is the load test with small counts.
func tinyConfig() loadConfig {
	cfg := defaultLoadConfig()
	cfg.data = dataset{books: 60, authors: 10, perAuthor: 5}
	cfg.seed = seedSpec{batch: 25, conc: 2}
	cfg.conc, cfg.reads, cfg.writes, cfg.logins, cfg.aggs, cfg.warmup = 4, 40, 12, 2, 6, 8
	cfg.waitIdle = 0
	cfg.domain = "bench.test"
	cfg.fanout = fanoutConfig{subscribers: 20, writes: 30, rate: 1000, window: 10, writers: 2, dialConc: 4}
	return cfg
}

// The harness against the real HTTP server in process: every scenario's
// sanity check passes and its load completes without a failed request.
// (No server process here, so CPU and memory read "-".)
func TestSmokeInProcess(t *testing.T) {
	env := servertest.Start(t)
	srv := &server{base: env.URL, host: strings.TrimPrefix(env.URL, "http://"), adminToken: servertest.AdminToken,
		version: "in-process", store: servertest.Kind(), pinning: "not pinned"}
	cfg := tinyConfig()
	rep, err := runBench(t.Context(), srv, cfg, &progress{w: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.rows) != len(scenarioNames()) {
		t.Fatalf("%d rows, want one per scenario (%d)", len(rep.rows), len(scenarioNames()))
	}
	scs := scenarios(instance{data: cfg.data})
	for i, r := range rep.rows {
		if want := cfg.count(scs[i].class); r.name != scs[i].name || r.requests != want || r.failed != 0 || r.rps <= 0 || r.p50 <= 0 {
			t.Errorf("row %+v: want %s with %d requests, none failed", r, scs[i].name, want)
		}
	}
	// Every subscriber received every write of the fan-out.
	if f := rep.fanout; f == nil || f.events != int64(cfg.fanout.subscribers*cfg.fanout.writes) || f.failed != 0 || f.eventRate <= 0 || f.p50 <= 0 {
		t.Errorf("fan-out %+v: want %d events (%d subscribers × %d writes), none failed", f, cfg.fanout.subscribers*cfg.fanout.writes, cfg.fanout.subscribers, cfg.fanout.writes)
	}
	md := rep.markdown()
	for _, want := range []string{"| a_get_book | 40 |", "| f_login_password | 2 |", "| h_webhook_function | 12 |", "Server memory", "| " + scFanout + " | 20 | 30 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	t.Log("\n" + md)

	// A wrong answer stops the run before any load, saying which request
	// answered what.
	bad := instance{host: srv.host, domain: cfg.domain, token: "not-the-token", data: cfg.data}
	err = sanity(t.Context(), srv, bad, scenarios(bad)[:1], cfg, &progress{})
	if err == nil || !strings.Contains(err.Error(), "sanity check of a_get_book failed: GET /rest/v1/Book/b1: HTTP 401") {
		t.Errorf("sanity with a wrong token: %v", err)
	}
}

// The whole command on a cored it builds, starts and pins, with small
// counts; then the scale parts.
func TestE2E(t *testing.T) {
	if !*e2e || testing.Short() {
		t.Skip("heavy (builds and starts cored): run with -e2e")
	}
	var out strings.Builder
	args := []string{"--src", "../..", "--books", "200", "--authors", "20", "--reads", "300", "--writes", "100", "--logins", "4",
		"--warmup", "50", "--wait-idle", "0", "--subscribers", "50", "--sub-writes", "40"}
	if err := run(t.Context(), args, &out, testWriter{t}); err != nil {
		t.Fatal(err)
	}
	for _, name := range append(scenarioNames(), scFanout) {
		if !strings.Contains(out.String(), "| "+name+" | ") {
			t.Errorf("no row for %s:\n%s", name, out.String())
		}
	}
	if strings.Contains(out.String(), " | - |") {
		t.Errorf("CPU or memory not measured on a started server:\n%s", out.String())
	}
	t.Log("\n" + out.String())

	out.Reset()
	args = []string{"scale", "--src", "../..", "--records", "500,1000", "--requests", "200", "--instances", "30", "--releases", "5",
		"--builds", "3", "--wait-idle", "0", "--settle", "0s"}
	if err := run(t.Context(), args, &out, testWriter{t}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"get @ 1,000 records", "a 50-type schema", "memory of 30 instances", "memory of 5 distinct releases"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the scale report lacks %q:\n%s", want, out.String())
		}
	}
	t.Log("\n" + out.String())
}
