package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// `corebench scale` measures how the service scales: get and indexed find
// as the record count grows, the build time of a large schema, and the
// memory that many instances of one release, or many releases, cost. Each
// part runs on a fresh cored (started as for the load test), so one part's
// memory does not show in another's.

// scaleConfig is the configuration of `corebench scale`.
type scaleConfig struct {
	parts     []string
	records   []int // record counts to measure at, ascending
	requests  int   // per get/find measurement
	conc      int
	seed      seedSpec
	types     int // of the large schema
	builds    int // releases of the large schema timed
	instances int
	releases  int
	waitIdle  time.Duration
	idleMax   float64
	timeout   time.Duration
	settle    time.Duration // pause before a memory reading
}

var scaleParts = []string{"records", "schema", "instances", "releases"}

func runScaleCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := scaleConfig{
		requests: 20000, conc: 32, seed: seedSpec{batch: 1000, conc: 2},
		types: 50, builds: 20, instances: 10000, releases: 1000,
		waitIdle: 60 * time.Second, idleMax: 20, timeout: 60 * time.Second, settle: 3 * time.Second,
	}
	var so serverOpts
	parts, records := strings.Join(scaleParts, ","), "10000,1000000"
	fs := flag.NewFlagSet("corebench scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: corebench scale [flags]\n\n"+
			"The scaling figures, each part on a fresh cored (started and pinned as for the load test):\n"+
			"  records    get and indexed find (sorted, range) at each --records count\n"+
			"  schema     build time of a --types-type schema (PUT of a release) and of an instance on it\n"+
			"  instances  memory of --instances instances of one release\n"+
			"  releases   memory of --releases distinct releases, one instance each\n\nflags:\n")
		fs.PrintDefaults()
	}
	so.register(fs)
	fs.StringVar(&parts, "parts", parts, "parts to run, comma-separated: "+strings.Join(scaleParts, ","))
	fs.StringVar(&records, "records", records, "record counts to measure get and find at, comma-separated, ascending")
	fs.IntVar(&cfg.requests, "requests", cfg.requests, "requests per get/find measurement")
	fs.IntVar(&cfg.conc, "conc", cfg.conc, "concurrent keep-alive connections of the get/find measurements")
	fs.IntVar(&cfg.seed.batch, "seed-batch", cfg.seed.batch, "records per POST /rest/v1 while seeding")
	fs.IntVar(&cfg.seed.conc, "seed-conc", cfg.seed.conc, "seeding requests in flight")
	fs.IntVar(&cfg.types, "types", cfg.types, "record types of the large schema")
	fs.IntVar(&cfg.builds, "builds", cfg.builds, "releases of the large schema to time")
	fs.IntVar(&cfg.instances, "instances", cfg.instances, "instances of one release to create")
	fs.IntVar(&cfg.releases, "releases", cfg.releases, "distinct releases to create (one instance each)")
	fs.DurationVar(&cfg.waitIdle, "wait-idle", cfg.waitIdle, "before each measurement, wait up to this long for other processes to go idle")
	fs.Float64Var(&cfg.idleMax, "idle-max", cfg.idleMax, "idle means other processes use at most this % of one core")
	fs.DurationVar(&cfg.timeout, "timeout", cfg.timeout, "time-out of one request")
	fs.DurationVar(&cfg.settle, "settle", cfg.settle, "pause before each memory reading")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected arguments %q", fs.Args())}
	}
	for part := range strings.SplitSeq(parts, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		if !slices.Contains(scaleParts, part) {
			return usageError{fmt.Sprintf("--parts: no part %q (have %s)", part, strings.Join(scaleParts, ", "))}
		}
		cfg.parts = append(cfg.parts, part)
	}
	for n := range strings.SplitSeq(records, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil || v < 1 || (len(cfg.records) > 0 && v <= cfg.records[len(cfg.records)-1]) {
			return usageError{fmt.Sprintf("--records %q: want ascending positive counts", records)}
		}
		cfg.records = append(cfg.records, v)
	}
	if cfg.requests < 1 || cfg.conc < 1 || cfg.types < 1 || cfg.builds < 1 || cfg.instances < 1 || cfg.releases < 1 || cfg.seed.batch < 1 {
		return usageError{"counts must be positive"}
	}

	so.readAllowed()
	p := &progress{w: stderr}
	fmt.Fprintf(stdout, "## corebench scale %s\n\n- machine: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), machine())
	shown := ""
	for _, part := range cfg.parts {
		err := withServer(ctx, so, p, func(srv *server) error {
			// Each part builds cored anew: say so when the checkout moved.
			if id := fmt.Sprintf("cored %s, store %s, %s", srv.version, srv.store, srv.pinning); id != shown {
				if shown == "" {
					fmt.Fprintf(stdout, "- %s\n", id)
				} else {
					fmt.Fprintf(stdout, "\n(from here on: %s)\n", id)
				}
				shown = id
			}
			s := &scaler{cfg: cfg, srv: srv, c: newClient(srv.base), m: newMeter(srv.pids()...), p: p, out: stdout}
			switch part {
			case "records":
				return s.records(ctx)
			case "schema":
				return s.schema(ctx)
			case "instances":
				return s.instances(ctx)
			default:
				return s.releases(ctx)
			}
		})
		if err != nil {
			return fmt.Errorf("scale %s: %w", part, err)
		}
	}
	return nil
}

// withServer runs f on a fresh server (or the target) and stops it.
func withServer(ctx context.Context, so serverOpts, p *progress, f func(*server) error) error {
	srv, err := startServer(ctx, so, p)
	if err != nil {
		return err
	}
	err = f(srv)
	if err != nil {
		srv.failed = true
	}
	if serr := srv.stop(); serr != nil {
		err = errors.Join(err, serr)
	}
	if srv.dir != "" && (srv.failed || so.keep) {
		p.printf("work directory kept: %s", srv.dir)
	}
	return err
}

// scaler runs the parts on one server.
type scaler struct {
	cfg scaleConfig
	srv *server
	c   *client
	m   *meter
	p   *progress
	out io.Writer
}

// domain returns a domain for the part's instances, unique on a target
// that may hold an earlier run.
func (s *scaler) domain(name string) string {
	if s.srv.dir == "" {
		return name + "-" + randomHex(3) + ".bench.test"
	}
	return name + ".bench.test"
}

// rssAfterSettle reads VmRSS after cfg.settle.
func (s *scaler) rssAfterSettle(ctx context.Context) int64 {
	select {
	case <-ctx.Done():
	case <-time.After(s.cfg.settle):
	}
	return s.m.kB("VmRSS")
}

// records: get and indexed find at growing record counts.
func (s *scaler) records(ctx context.Context) error {
	last := s.cfg.records[len(s.cfg.records)-1]
	data := dataset{books: last, authors: min(1000, last), perAuthor: 1}
	in, err := deploy(ctx, s.c, s.srv.adminToken, s.domain("records"), true, data)
	if err != nil {
		return err
	}
	in.host = s.srv.host
	fmt.Fprintf(s.out, "\n### get and indexed find by record count\n\n"+
		"Book records as in the load test (`@indices(sets: [[\"price\"]])`), %d connections, %s requests per row, through /rest/v1 "+
		"(get: `GET /rest/v1/Book/{random id}`; sorted: `price > 50 SORT price DESC`, first 25; range: `price >= 42 AND price < 42.25`, first 25 "+
		"— 25 books in every 10,000 match; a page holds at most 25).\n\n",
		s.cfg.conc, fmtInt(int64(s.cfg.requests)))
	var rows []row
	var notes []string
	seeded := 0
	crud := [][2]string{{"core-domain", in.domain}, {"authorization", in.token}}
	for _, n := range s.cfg.records {
		s.p.printf("seeding books %d..%d (%d per request, %d in flight)", seeded+1, n, s.cfg.seed.batch, s.cfg.seed.conc)
		t0 := time.Now()
		if err := seedRecords(ctx, s.c, in, "Book", seeded+1, n, s.cfg.seed, data.book, bookID, s.p); err != nil {
			return err
		}
		took := time.Since(t0)
		notes = append(notes, fmt.Sprintf("seeding books %s..%s took %.1f s (%s records/s); then VmRSS %s, store on disk %s",
			fmtInt(int64(seeded+1)), fmtInt(int64(n)), took.Seconds(), fmtInt(int64(float64(n-seeded)/took.Seconds())),
			fmtMB(s.m.kB("VmRSS")), dirSize(s.srv.dir)))
		seeded = n
		in.data.books = n
		inRange := 0 // books priced 42.00 to 42.24: 25 of 10,000, 2,500 of 1,000,000
		for j := 1; j <= n; j++ {
			if p := bookPrice(j); p >= 42 && p < 42.25 {
				inRange++
			}
		}
		qs := []struct {
			name string
			req  *request
			chk  func(checkCtx) error
		}{
			{"get", newRequest(in.host, "GET", mustTemplate("/rest/v1/Book/{id}"), nil, in.data.bookIDs(), crud), in.checkBook},
			{"find sorted", newRequest(in.host, "GET", mustTemplate("/rest/v1/Book?arcql=price%20%3E%2050%20SORT%20price%20DESC&first=25"), nil, nil, crud),
				func(c checkCtx) error { return checkOver50(c.a, 25, in.data.topPrices(25)) }},
			{"find range", newRequest(in.host, "GET", mustTemplate("/rest/v1/Book?arcql=price%20%3E%3D%2042%20AND%20price%20%3C%2042.25&first=25"), nil, nil, crud),
				func(c checkCtx) error { return checkPrices(c.a, min(inRange, 25), 42, 42.25) }},
		}
		for _, q := range qs {
			name := fmt.Sprintf("%s @ %s records", q.name, fmtInt(int64(n)))
			if err := sanityOne(ctx, s.srv.host, q.req, q.chk, s.cfg.timeout); err != nil {
				return fmt.Errorf("sanity check of %s failed: %w", name, err)
			}
			if note := s.m.waitIdle(ctx, s.cfg.waitIdle, s.cfg.idleMax, s.p); note != "" {
				notes = append(notes, name+": "+note)
			}
			s.p.printf("%s: %d requests", name, s.cfg.requests)
			rw, err := measure(ctx, s.m, name, loadSpec{addr: in.host, req: q.req, n: s.cfg.requests, conc: s.cfg.conc, timeout: s.cfg.timeout, seed: 7})
			if err != nil {
				return err
			}
			s.p.printf("  %.0f req/s, p50 %s ms, server CPU %s ms/request", rw.rps, fmtMS(rw.p50), fmtCPU(rw.cpuPerReq))
			rows = append(rows, rw)
		}
	}
	fmt.Fprint(s.out, formatTable(rows))
	for _, n := range notes {
		fmt.Fprintf(s.out, "\n- %s", n)
	}
	fmt.Fprintln(s.out)
	return nil
}

// checkPrices: n books, each priced from lo up to (not including) hi.
func checkPrices(a answer, n int, lo, hi float64) error {
	ps, err := prices(a)
	if err != nil {
		return err
	}
	if len(ps) != n || slices.ContainsFunc(ps, func(x float64) bool { return x < lo || x >= hi }) {
		return fmt.Errorf("prices %v, want %d books priced from %.2f to below %.2f", ps, n, lo, hi)
	}
	return nil
}

// sanityOne sends r once with its first id and checks the answer.
func sanityOne(ctx context.Context, host string, r *request, check func(checkCtx) error, timeout time.Duration) error {
	cn := newConn(host, timeout)
	defer cn.close()
	v := values{seq: 1}
	if len(r.ids) > 0 {
		v.id = r.ids[0]
	}
	req, _ := r.build(nil, nil, v)
	if err := ctx.Err(); err != nil {
		return err
	}
	status, body, err := cn.roundTrip(req, nil)
	if err != nil {
		return err
	}
	return check(checkCtx{a: answer{status: status, body: body}, id: v.id, get: func(string) (answer, error) {
		return answer{}, errors.New("no read-back here")
	}})
}

// dirSize is the size of the files under the work directory's data, as
// text ("-" when unknown, e.g. on MongoDB or a target).
func dirSize(dir string) string {
	if dir == "" {
		return "-"
	}
	var total int64
	err := filepath.WalkDir(filepath.Join(dir, "data"), func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if info, err := d.Info(); err == nil && !d.IsDir() {
			total += info.Size()
		}
		return nil
	})
	if err != nil || total == 0 {
		return "-"
	}
	return fmtMB(total / 1024)
}

// largeSDL is a schema of n record types, each with scalars, a list, a
// unique field, two index sets and two references (one to a list).
func largeSDL(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "type T%d @indices(sets: [[\"score\"], [\"name\", \"count\"]]) {\n"+
			"  name: String @unique\n  count: Int\n  score: Float\n  active: Boolean\n  note: String\n  tags: [String!]\n"+
			"  next: T%d\n  items: [T%d!]\n}\n", i, i%n+1, (i+1)%n+1)
	}
	return b.String()
}

// schema: the build time of a large schema, and of an instance on it.
func (s *scaler) schema(ctx context.Context) error {
	sdl := largeSDL(s.cfg.types)
	ah := adminHeaders(s.srv.adminToken)
	app := "scale" + strconv.Itoa(s.cfg.types)
	if s.srv.dir == "" {
		app += "-" + randomHex(3)
	}
	var puts []time.Duration
	a := s.m.read()
	for i := 1; i <= s.cfg.builds; i++ {
		t0 := time.Now()
		if _, err := s.c.call(ctx, "deploy the large schema", "PUT", fmt.Sprintf("/admin/v1/apps/%s/releases/v%d", app, i), ah,
			map[string]any{"schema": sdl}); err != nil {
			return err
		}
		puts = append(puts, time.Since(t0))
	}
	cpuPut := s.m.cpuMS(a, s.m.read()) / float64(s.cfg.builds)
	// One instance on each release: CPU times come in 10 ms ticks, too
	// coarse for one creation.
	base := s.domain("schema")
	var creates []time.Duration
	var domain, token string
	a = s.m.read()
	for i := 1; i <= s.cfg.builds; i++ {
		domain = fmt.Sprintf("s%d.%s", i, base)
		t0 := time.Now()
		v, err := s.c.call(ctx, "create an instance of the large schema", "POST", "/admin/v1/instances", ah,
			map[string]any{"domain": domain, "app": app, "release": "v" + strconv.Itoa(i)}, 201)
		if err != nil {
			return err
		}
		creates = append(creates, time.Since(t0))
		token, _ = dig(v, "token").(string)
	}
	cpuCreate := s.m.cpuMS(a, s.m.read()) / float64(s.cfg.builds)
	var firsts [2]time.Duration
	for i := range firsts {
		t0 := time.Now()
		if _, err := s.c.call(ctx, "find on the large schema", "GET", "/rest/v1/T1?arcql=*&first=1", map[string]string{"core-domain": domain, "authorization": token}, nil); err != nil {
			return err
		}
		firsts[i] = time.Since(t0)
	}
	slices.Sort(puts)
	slices.Sort(creates)
	fmt.Fprintf(s.out, "\n### a %d-type schema\n\n"+
		"Each type: 6 scalar fields (one `@unique`, one list), 2 references (one a list), 2 `@indices` sets; %s bytes of SDL. "+
		"%d releases of it published one after the other, then one instance on each.\n\n"+
		"| step | wall ms (median) | min | max | server CPU ms (mean) |\n|---|--:|--:|--:|--:|\n"+
		"| PUT /admin/v1/apps/{app}/releases/{release}: parse, validate, compile, store | %s | %s | %s | %s |\n"+
		"| POST /admin/v1/instances on it: declare the types to the store | %s | %s | %s | %s |\n"+
		"| first GET /rest/v1/T1 on an instance (REST description and document built) | %s | | | |\n"+
		"| second GET /rest/v1/T1 (cached) | %s | | | |\n",
		s.cfg.types, fmtInt(int64(len(sdl))), s.cfg.builds,
		fmtMS(puts[len(puts)/2]), fmtMS(puts[0]), fmtMS(puts[len(puts)-1]), strconv.FormatFloat(cpuPut, 'f', 1, 64),
		fmtMS(creates[len(creates)/2]), fmtMS(creates[0]), fmtMS(creates[len(creates)-1]), strconv.FormatFloat(cpuCreate, 'f', 1, 64),
		fmtMS(firsts[0]), fmtMS(firsts[1]))
	return nil
}

// touch makes one request on an instance, so that whatever the service
// builds lazily for it exists.
func (s *scaler) touch(ctx context.Context, domain, token string) error {
	_, err := s.c.call(ctx, "a request on "+domain, "GET", "/rest/v1/Book?arcql=*&first=1",
		map[string]string{"core-domain": domain, "authorization": token}, nil)
	return err
}

// parallel runs f(0..n-1) on conc goroutines; the first error stops it.
func parallel(ctx context.Context, n, conc int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for i := range next {
				if err := f(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// instances: the memory of many instances of one release.
func (s *scaler) instances(ctx context.Context) error {
	if s.srv.pid <= 0 {
		return errors.New("the memory figures need the server's process id (--pid with --target)")
	}
	base := s.domain("inst")
	in, err := deploy(ctx, s.c, s.srv.adminToken, base, true, dataset{books: 1, authors: 1, perAuthor: 1})
	if err != nil {
		return err
	}
	if err := s.touch(ctx, in.domain, in.token); err != nil {
		return err
	}
	rel := releaseName(benchSDL(true))
	before := s.rssAfterSettle(ctx)
	s.p.printf("creating %d instances of release %s/%s", s.cfg.instances, benchApp, rel)
	tokens := make([]string, s.cfg.instances)
	domain := func(i int) string { return fmt.Sprintf("i%d.%s", i+1, base) }
	t0 := time.Now()
	err = parallel(ctx, s.cfg.instances, 4, func(ctx context.Context, i int) error {
		v, err := s.c.call(ctx, "create instance", "POST", "/admin/v1/instances", adminHeaders(s.srv.adminToken),
			map[string]any{"domain": domain(i), "app": benchApp, "release": rel}, 201)
		if err != nil {
			return err
		}
		tokens[i], _ = dig(v, "token").(string)
		if (i+1)%1000 == 0 {
			s.p.printf("  %d created", i+1)
		}
		return nil
	})
	if err != nil {
		return err
	}
	created := time.Since(t0)
	afterCreate := s.rssAfterSettle(ctx)
	s.p.printf("one request on each instance")
	t0 = time.Now()
	if err := parallel(ctx, s.cfg.instances, 8, func(ctx context.Context, i int) error {
		return s.touch(ctx, domain(i), tokens[i])
	}); err != nil {
		return err
	}
	touched := time.Since(t0)
	after := s.rssAfterSettle(ctx)
	n := float64(s.cfg.instances)
	fmt.Fprintf(s.out, "\n### memory of %s instances of one release\n\n"+
		"Created through POST /admin/v1/instances (4 in flight) in %.1f s (%.1f ms each); then one GET /rest/v1/Book on each (%.1f s).\n\n"+
		"| server VmRSS | MB | per instance |\n|---|--:|--:|\n"+
		"| before (1 instance, warm) | %.1f | |\n| after creating them | %.1f | %s |\n| after a request on each | %.1f | %s |\n| peak (VmHWM) | %.1f | |\n",
		fmtInt(int64(s.cfg.instances)), created.Seconds(), created.Seconds()*1000/n, touched.Seconds(),
		float64(before)/1024, float64(afterCreate)/1024, perItem(afterCreate-before, n), float64(after)/1024, perItem(after-before, n),
		float64(s.m.kB("VmHWM"))/1024)
	return nil
}

// perItem writes a kB delta shared by n items as KiB per item.
func perItem(deltaKB int64, n float64) string {
	v := float64(deltaKB) / n
	if math.Abs(v) < 10 {
		return strconv.FormatFloat(v, 'f', 2, 64) + " KiB"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " KiB"
}

// releaseSDL is release i of the distinct-releases part: the bench schema
// with a field of its own, so no two releases are alike.
func releaseSDL(i int) string {
	return "type Author { name: String age: Int bestbook: Book booklist: [Book!] }\n" +
		"type Book @indices(sets: [[\"price\"]]) { title: String authorid: Int price: Float extra" + strconv.Itoa(i) + ": Int }\n"
}

// releases: the memory of many distinct releases, one instance each.
func (s *scaler) releases(ctx context.Context) error {
	if s.srv.pid <= 0 {
		return errors.New("the memory figures need the server's process id (--pid with --target)")
	}
	ah := adminHeaders(s.srv.adminToken)
	base := s.domain("rel")
	app := "scalerel"
	if s.srv.dir == "" {
		app += "-" + randomHex(3)
	}
	mk := func(ctx context.Context, i int) (time.Duration, error) {
		t0 := time.Now()
		if _, err := s.c.call(ctx, "deploy a release", "PUT", fmt.Sprintf("/admin/v1/apps/%s/releases/v%d", app, i), ah,
			map[string]any{"schema": releaseSDL(i)}); err != nil {
			return 0, err
		}
		put := time.Since(t0)
		d := fmt.Sprintf("r%d.%s", i, base)
		v, err := s.c.call(ctx, "create instance", "POST", "/admin/v1/instances", ah,
			map[string]any{"domain": d, "app": app, "release": "v" + strconv.Itoa(i)}, 201)
		if err != nil {
			return 0, err
		}
		token, _ := dig(v, "token").(string)
		return put, s.touch(ctx, d, token)
	}
	if _, err := mk(ctx, 0); err != nil {
		return err
	}
	before := s.rssAfterSettle(ctx)
	s.p.printf("creating %d releases with one instance each", s.cfg.releases)
	puts := make([]time.Duration, s.cfg.releases)
	t0 := time.Now()
	err := parallel(ctx, s.cfg.releases, 1, func(ctx context.Context, i int) error {
		put, err := mk(ctx, i+1)
		puts[i] = put
		if (i+1)%100 == 0 {
			s.p.printf("  %d created", i+1)
		}
		return err
	})
	if err != nil {
		return err
	}
	took := time.Since(t0)
	after := s.rssAfterSettle(ctx)
	slices.Sort(puts)
	n := float64(s.cfg.releases)
	fmt.Fprintf(s.out, "\n### memory of %s distinct releases\n\n"+
		"Each release: the Author/Book schema with one field of its own; each gets one instance and one GET /rest/v1/Book. "+
		"All created one after the other in %.1f s (PUT of a release: median %s ms).\n\n"+
		"| server VmRSS | MB | per release |\n|---|--:|--:|\n"+
		"| before (1 release, warm) | %.1f | |\n| after | %.1f | %s |\n| peak (VmHWM) | %.1f | |\n",
		fmtInt(int64(s.cfg.releases)), took.Seconds(), fmtMS(puts[len(puts)/2]),
		float64(before)/1024, float64(after)/1024, perItem(after-before, n), float64(s.m.kB("VmHWM"))/1024)
	return nil
}
