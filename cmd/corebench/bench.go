package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// loadConfig is the load test's configuration (flags of `corebench`).
type loadConfig struct {
	data       dataset
	seed       seedSpec
	conc       int
	reads      int // requests per read scenario
	writes     int // per write scenario (the webhook's too)
	logins     int
	aggs       int    // per aggregation scenario
	sqlite     string // the sqlite3 shell to compare the aggregations with; "": no comparison
	sqliteRuns int
	warmup     int // GET-book requests before the first scenario, not recorded
	only       []string
	noIndex    bool
	domain     string
	waitIdle   time.Duration
	idleMax    float64 // % of one core other processes may use when a scenario starts
	timeout    time.Duration
	rngSeed    uint64
	keepGoing  bool // a failing sanity check warns instead of stopping
	fanout     fanoutConfig
}

func defaultLoadConfig() loadConfig {
	return loadConfig{
		data:       defaultDataset,
		seed:       seedSpec{batch: 250, conc: 1},
		conc:       32,
		reads:      20000,
		writes:     6400,
		logins:     512,
		aggs:       1000,
		sqliteRuns: 200,
		warmup:     2000,
		waitIdle:   60 * time.Second,
		idleMax:    20,
		timeout:    60 * time.Second,
		rngSeed:    42,
		fanout:     defaultFanoutConfig(),
	}
}

// count is the number of requests of a class.
func (c loadConfig) count(cl class) int {
	switch cl {
	case classRead:
		return c.reads
	case classLogin:
		return c.logins
	case classAggregate:
		return c.aggs
	default:
		return c.writes
	}
}

// row is one line of the table.
type row struct {
	name      string
	requests  int
	rps       float64
	p50, p95  time.Duration
	p99       time.Duration
	cpuPerReq float64 // server CPU ms per request; NaN when not measured
	failed    int     // non-2xx answers and errors
	otherPct  float64 // CPU of other processes, % of one core; NaN when not measured
	rssKB     int64   // the server's largest VmRSS during the row, kB; -1 when not measured
	loadPct   float64 // the load generator's CPU, % of one core; NaN when not measured
	note      string  // the first failure, if any
}

// report is what a run prints.
type report struct {
	started time.Time
	srv     *server
	cfg     loadConfig
	machine string
	rows    []row
	seeded  time.Duration
	// server memory in kB; -1 when not measured
	rssSeeded, rssLoadMax, hwm int64
	notes                      []string
	sqlite                     []sqliteRow // the SQLite comparison, when asked for
	fanout                     *fanoutRow  // the subscription fan-out, when it ran
}

// meter measures the server around a piece of work: CPU time, memory,
// and what other processes used meanwhile. The server may be several
// processes (--processes): their figures are summed.
type meter struct {
	pid  int   // the first server process; 0 when unknown
	pids []int // every server process
	// aux are processes of the server's set-up that are not "other"
	// load (the FerretDB of --ferretdb): counted in neither figure.
	aux  []int
	clk  float64
	self int
}

func newMeter(pids ...int) *meter {
	pids = slices.DeleteFunc(slices.Clone(pids), func(p int) bool { return p <= 0 })
	m := &meter{pids: pids, clk: clockTicks(), self: os.Getpid()}
	if len(pids) > 0 {
		m.pid = pids[0]
	}
	return m
}

// sample is one reading.
type sample struct {
	at                  time.Time
	srvCPU, other, self int64 // ticks
}

func (m *meter) read() sample {
	s := sample{at: time.Now(), srvCPU: -1, other: -1, self: -1}
	if t, err := procCPU(m.self); err == nil {
		s.self = t
	}
	if m.pid > 0 {
		skip := append([]int{m.self}, m.aux...)
		s.srvCPU = 0
		for _, p := range m.pids {
			t, err := treeCPU(p)
			if err != nil {
				s.srvCPU = -1
				break
			}
			s.srvCPU += t
			skip = append(skip, family(p)...)
		}
		s.other = othersCPU(skip...)
	}
	return s
}

// cpuMS is the server CPU between two samples, in ms; NaN when unknown.
func (m *meter) cpuMS(a, b sample) float64 {
	if a.srvCPU < 0 || b.srvCPU < 0 {
		return math.NaN()
	}
	return float64(b.srvCPU-a.srvCPU) / m.clk * 1000
}

// otherPct is other processes' CPU between two samples, in % of one core.
func (m *meter) otherPct(a, b sample) float64 {
	secs := b.at.Sub(a.at).Seconds()
	if a.other < 0 || b.other < 0 || secs <= 0 {
		return math.NaN()
	}
	return float64(b.other-a.other) / m.clk / secs * 100
}

// selfPct is the load generator's CPU between two samples, in % of one
// core; NaN when unknown.
func (m *meter) selfPct(a, b sample) float64 {
	secs := b.at.Sub(a.at).Seconds()
	if a.self < 0 || b.self < 0 || secs <= 0 {
		return math.NaN()
	}
	return float64(b.self-a.self) / m.clk / secs * 100
}

// kB reads a memory figure of the server, summed over its processes; -1
// when unknown.
func (m *meter) kB(key string) int64 {
	if m.pid <= 0 {
		return -1
	}
	var total int64
	for _, p := range m.pids {
		v := processKB(p, key)
		if v < 0 {
			return -1
		}
		total += v
	}
	return total
}

// processKB reads a memory figure of one server process; -1 when unknown.
// While function worker processes run, VmRSS is the summed PSS of the
// process and them.
func processKB(pid int, key string) int64 {
	v, err := procStatusKB(pid, key)
	if err != nil {
		return -1
	}
	if f := family(pid); key == "VmRSS" && len(f) > 1 {
		// The function worker processes' memory is the server's too;
		// they share the binary's pages with it, which RSS would count
		// once per process: their proportional shares (PSS) are summed.
		var pss int64
		for _, p := range f {
			kb, err := procRollupKB(p, "Pss")
			if err != nil && p == pid {
				return v
			}
			pss += kb
		}
		return pss
	}
	return v
}

// watchRSS samples the server's VmRSS every 100 ms until stop is called,
// which returns the largest value seen (kB; -1 when not measured).
func (m *meter) watchRSS() (stop func() int64) {
	if m.pid <= 0 {
		return func() int64 { return -1 }
	}
	done := make(chan struct{})
	var peak int64 = -1
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if v := m.kB("VmRSS"); v > peak {
				peak = v
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() int64 {
		close(done)
		wg.Wait()
		if v := m.kB("VmRSS"); v > peak {
			peak = v
		}
		return peak
	}
}

// waitIdle waits up to cfg.waitIdle until other processes use at most
// cfg.idleMax % of one core (sampled over a second), so someone else's job
// does not skew a row. It returns a note when it gave up.
func (m *meter) waitIdle(ctx context.Context, within time.Duration, maxPct float64, p *progress) string {
	if within <= 0 || m.pid <= 0 {
		return ""
	}
	deadline := time.Now().Add(within)
	said := false
	for {
		a := m.read()
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(time.Second):
		}
		pct := m.otherPct(a, m.read())
		if math.IsNaN(pct) || pct <= maxPct {
			return ""
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("other processes still used %.0f%% of a core after waiting %v", pct, within)
		}
		if !said {
			p.printf("  waiting for other processes to go idle (%.0f%% of a core in use)", pct)
			said = true
		}
	}
}

// runBench sets the instance up on srv, checks every scenario once, then
// measures each.
func runBench(ctx context.Context, srv *server, cfg loadConfig, p *progress) (*report, error) {
	r := &report{started: time.Now(), srv: srv, cfg: cfg, machine: machine(), rssSeeded: -1, rssLoadMax: -1, hwm: -1}
	if err := cfg.data.check(); err != nil {
		return nil, usageError{err.Error()}
	}
	for _, name := range cfg.only {
		if !slices.Contains(scenarioNames(), name) && name != scFanout {
			return nil, usageError{fmt.Sprintf("--only: no scenario %q (have %s, %s)", name, strings.Join(scenarioNames(), ", "), scFanout)}
		}
	}
	m := newMeter(srv.pids()...)
	m.aux = srv.aux
	c := newClient(srv.base)

	// Stop the load at once if the server dies.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if srv.exited != nil {
		go func() {
			select {
			case <-srv.exited:
				cancel(errors.New("cored exited"))
			case <-ctx.Done():
			}
		}()
	}

	p.printf("deploying app %s (schema, function %s/%s) and instance %s", benchApp, hookFunction, hookVersion, cfg.domain)
	in, err := deploy(ctx, c, srv.adminToken, cfg.domain, !cfg.noIndex, cfg.data)
	if err != nil {
		return nil, err
	}
	in.host = srv.host
	if len(srv.extra) > 0 {
		if err := waitAllKnow(ctx, srv, in, p); err != nil {
			return nil, err
		}
	}
	p.printf("seeding %d books and %d authors (%d books each) through POST /rest/v1, %d per request",
		cfg.data.books, cfg.data.authors, cfg.data.perAuthor, cfg.seed.batch)
	t0 := time.Now()
	if err := seed(ctx, c, in, cfg.seed, p); err != nil {
		return nil, err
	}
	r.seeded = time.Since(t0)
	// The grants of the grantee's scenario take long on a slow store:
	// made only when it runs.
	grants := len(cfg.only) == 0 || slices.Contains(cfg.only, scGranteeList)
	if in.grantee, err = createUser(ctx, c, in, grants); err != nil {
		return nil, err
	}
	if err := verifySeed(ctx, c, in); err != nil {
		return nil, err
	}
	r.rssSeeded = m.kB("VmRSS")
	p.printf("seeded in %.1f s; sampled records read back as generated", r.seeded.Seconds())

	all := scenarios(in)
	var run []*scenario
	for _, sc := range all {
		if len(cfg.only) == 0 || slices.Contains(cfg.only, sc.name) {
			run = append(run, sc)
		}
	}
	if err := sanity(ctx, srv, in, run, cfg, p); err != nil {
		return nil, err
	}
	if cfg.warmup > 0 {
		p.printf("warm-up: %d × %s (not recorded)", cfg.warmup, scGetBook)
		if _, err := runLoad(ctx, loadSpec{addr: srv.host, req: all[0].req, n: cfg.warmup, conc: cfg.conc, timeout: cfg.timeout, seed: cfg.rngSeed + 1}); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}

	for _, sc := range run {
		if note := m.waitIdle(ctx, cfg.waitIdle, cfg.idleMax, p); note != "" {
			r.notes = append(r.notes, sc.name+": "+note)
		}
		n := cfg.count(sc.class)
		p.printf("%s: %d requests over %d connections", sc.name, n, cfg.conc)
		profiled := srv.profile(ctx, sc.name, p)
		rw, err := measure(ctx, m, sc.name, loadSpec{addr: srv.host, req: sc.req, n: n, conc: cfg.conc, timeout: cfg.timeout, seed: cfg.rngSeed})
		profiled()
		if err != nil {
			return nil, err
		}
		r.rssLoadMax = max(r.rssLoadMax, rw.rssKB)
		if rw.failed > 0 {
			r.notes = append(r.notes, fmt.Sprintf("%s: %d requests failed; first: %s", sc.name, rw.failed, rw.note))
		}
		p.printf("  %.0f req/s, p50 %s ms, p99 %s ms, server CPU %s ms/request; load generator %s%% of a core, other processes %s%%",
			rw.rps, fmtMS(rw.p50), fmtMS(rw.p99), fmtCPU(rw.cpuPerReq), fmtPct(rw.loadPct), fmtPct(rw.otherPct))
		r.rows = append(r.rows, rw)
	}
	if cfg.fanout.subscribers > 0 && (len(cfg.only) == 0 || slices.Contains(cfg.only, scFanout)) {
		waitIdle := func() {
			if note := m.waitIdle(ctx, cfg.waitIdle, cfg.idleMax, p); note != "" {
				r.notes = append(r.notes, scFanout+": "+note)
			}
		}
		fr, err := runFanout(ctx, srv, m, in, cfg.fanout, cfg.timeout, waitIdle, p)
		if err != nil {
			return nil, err
		}
		if fr.failed > 0 {
			r.notes = append(r.notes, fmt.Sprintf("%s: %d writes or subscribers failed; first: %s", scFanout, fr.failed, fr.note))
		}
		p.printf("  %.0f writes/s, %.0f events/s, delivery p50 %s ms, p99 %s ms, server CPU %s ms/event, %s kB/subscription; load generator %s%% of a core, other processes %s%%",
			fr.writeRate, fr.eventRate, fmtMS(fr.p50), fmtMS(fr.p99), fmtCPU(fr.cpuPerEvent), fmtKB(fr.subKB), fmtPct(fr.loadPct), fmtPct(fr.otherPct))
		r.fanout = &fr
	}
	r.hwm = m.kB("VmHWM")
	if cfg.sqlite != "" && slices.ContainsFunc(run, func(sc *scenario) bool { return sc.class == classAggregate }) {
		dir, err := os.MkdirTemp("", "corebench-sqlite-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		p.printf("SQLite (%s): the same books, each aggregation query %d times", cfg.sqlite, cfg.sqliteRuns)
		if r.sqlite, err = runSQLite(ctx, cfg.sqlite, dir, cfg.data, cfg.sqliteRuns); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// measure runs one load and makes its row: throughput and latency from
// the load generator; server CPU per request, its largest RSS and other
// processes' CPU from /proc.
func measure(ctx context.Context, m *meter, name string, spec loadSpec) (row, error) {
	stopRSS := m.watchRSS()
	a := m.read()
	res, err := runLoad(ctx, spec)
	b := m.read()
	rss := stopRSS()
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			err = cause
		}
		return row{}, fmt.Errorf("%s: %w", name, err)
	}
	rw := row{name: name, requests: res.requests, failed: res.non2xx + res.errors, note: res.firstBad,
		p50: res.hist.percentile(50), p95: res.hist.percentile(95), p99: res.hist.percentile(99),
		cpuPerReq: math.NaN(), otherPct: m.otherPct(a, b), rssKB: rss, loadPct: m.selfPct(a, b)}
	if secs := res.wall.Seconds(); secs > 0 {
		rw.rps = float64(res.requests) / secs
	}
	if res.requests > 0 {
		rw.cpuPerReq = m.cpuMS(a, b) / float64(res.requests)
	}
	return rw, nil
}

// sanity sends each scenario's request once, as built for the load with
// the first id and fixed values, and checks the answer.
func sanity(ctx context.Context, srv *server, in instance, run []*scenario, cfg loadConfig, p *progress) error {
	cn := newConn(srv.host, cfg.timeout)
	defer cn.close()
	getReq := func(path string) *request {
		return newRequest(srv.host, "GET", template{{kind: partText, text: path}}, nil, nil,
			[][2]string{{"core-domain", in.domain}, {"authorization", in.token}})
	}
	var buf, body []byte
	send := func(r *request, v values) (answer, error) {
		if err := ctx.Err(); err != nil {
			return answer{}, err
		}
		buf, body = r.build(buf, body, v)
		status, out, err := cn.roundTrip(buf, nil)
		return answer{status: status, body: out}, err
	}
	for _, sc := range run {
		v := values{seq: 1}
		if len(sc.req.ids) > 0 {
			v.id = sc.req.ids[0]
		}
		line := sc.req.method + " " + string(sc.req.path.appendTo(nil, v))
		a, err := send(sc.req, v)
		if err == nil {
			err = sc.check(checkCtx{a: a, id: v.id, get: func(path string) (answer, error) { return send(getReq(path), values{}) }})
		}
		if err != nil {
			msg := fmt.Sprintf("sanity check of %s failed: %s: %v", sc.name, line, err)
			if !cfg.keepGoing {
				return errors.New(msg + "\n(not running the load; --keep-going runs it anyway)")
			}
			p.printf("!! %s", msg)
			continue
		}
		p.printf("sanity ok: %s (%s)", sc.name, line)
	}
	return nil
}

// waitAllKnow waits until every process of a server started with
// --processes serves the new instance (each reads the others' changes
// every 500 ms): 32 requests in a row on new connections, which the
// kernel spreads over the processes, must answer 2xx.
func waitAllKnow(ctx context.Context, srv *server, in instance, p *progress) error {
	p.printf("waiting until all %d processes serve %s", 1+len(srv.extra), in.domain)
	c := newClient(srv.base)
	c.hc.Transport = &http.Transport{DisableKeepAlives: true}
	deadline := time.Now().Add(30 * time.Second)
	for ok := 0; ok < 32; {
		a, err := c.do(ctx, "GET", "/rest/v1/Book?first=1", in.crudHeaders(), nil)
		switch {
		case err != nil:
			return err
		case a.status >= 200 && a.status <= 299:
			ok++
		default:
			ok = 0
			if time.Now().After(deadline) {
				return fmt.Errorf("a process still answers HTTP %d for %s after 30 s: %s", a.status, in.domain, a.excerpt())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}
