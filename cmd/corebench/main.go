package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return
	}
	fmt.Fprintln(os.Stderr, "corebench:", err)
	if errors.As(err, new(usageError)) {
		os.Exit(2)
	}
	os.Exit(1)
}

// run dispatches: `corebench [load] [flags]`, `corebench scale [flags]`
// or `corebench floor [flags]`.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "scale":
			return runScaleCmd(ctx, args[1:], stdout, stderr)
		case "floor":
			return runFloorCmd(ctx, args[1:], stdout, stderr)
		case "load":
			args = args[1:]
		}
	}
	return runLoadCmd(ctx, args, stdout, stderr)
}

// runLoadCmd is `corebench [load]`: the load test and its table.
func runLoadCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := defaultLoadConfig()
	var so serverOpts
	var only string
	fs := flag.NewFlagSet("corebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: corebench [load] [flags]      the load test (this)\n"+
			"       corebench scale [flags]       the scaling figures (corebench scale -h)\n"+
			"       corebench floor [flags]       a bare echo handler to measure the floor against (corebench floor -h)\n\n"+
			"Starts cored (built from this checkout) pinned to one CPU, deploys the Author/Book\n"+
			"schema, seeds the data set of ../shared/bench, checks one answer per scenario, then\n"+
			"runs each scenario and prints a markdown table.\n\nscenarios:\n")
		for _, sc := range scenarios(instance{domain: "{domain}", data: defaultDataset}) {
			fmt.Fprintf(stderr, "  %-36s %-5s  %s\n", sc.name, sc.class, sc.desc)
		}
		fmt.Fprintf(stderr, "  %-36s %-5s  %s\n", scFanout, "subs", "--subscribers WebSockets subscribed to Book changes, --sub-writes books written at up to --sub-rate/s")
		fmt.Fprint(stderr, "\nflags:\n")
		fs.PrintDefaults()
	}
	so.register(fs)
	fs.IntVar(&cfg.conc, "conc", cfg.conc, "concurrent keep-alive connections")
	fs.IntVar(&cfg.reads, "reads", cfg.reads, "requests per read scenario (a, b1, b2, c, g)")
	fs.IntVar(&cfg.writes, "writes", cfg.writes, "requests per write scenario (d, e, h)")
	fs.IntVar(&cfg.logins, "logins", cfg.logins, "requests of the login scenario (f)")
	fs.IntVar(&cfg.aggs, "aggregates", cfg.aggs, "requests per aggregation scenario (j, k)")
	fs.StringVar(&cfg.sqlite, "sqlite", "", "the sqlite3 shell: also time the aggregations' SQL on the same books in SQLite and print the comparison")
	fs.IntVar(&cfg.sqliteRuns, "sqlite-runs", cfg.sqliteRuns, "times each SQLite query runs (the median is reported)")
	fs.IntVar(&cfg.warmup, "warmup", cfg.warmup, "GET-book requests before the first scenario, not recorded")
	fs.IntVar(&cfg.fanout.subscribers, "subscribers", cfg.fanout.subscribers, "WebSocket subscribers of the subscription fan-out ("+scFanout+"; 0: skip it)")
	fs.IntVar(&cfg.fanout.writes, "sub-writes", cfg.fanout.writes, "books written during the subscription fan-out")
	fs.Float64Var(&cfg.fanout.rate, "sub-rate", cfg.fanout.rate, "writes a second the subscription fan-out aims at (at most --sub-window ahead of the slowest subscriber)")
	fs.IntVar(&cfg.fanout.window, "sub-window", cfg.fanout.window, "writes the fan-out's writer may be ahead of the slowest subscriber (a subscriber's queue holds 1,000)")
	fs.StringVar(&only, "only", "", "comma-separated scenario names to run (default all)")
	fs.IntVar(&cfg.data.books, "books", cfg.data.books, "books to seed")
	fs.IntVar(&cfg.data.authors, "authors", cfg.data.authors, "authors to seed")
	fs.IntVar(&cfg.data.perAuthor, "books-per-author", cfg.data.perAuthor, "length of each author's booklist")
	fs.IntVar(&cfg.seed.batch, "seed-batch", cfg.seed.batch, "records per POST /rest/v1 while seeding")
	fs.IntVar(&cfg.seed.conc, "seed-conc", cfg.seed.conc, "seeding requests in flight")
	fs.BoolVar(&cfg.noIndex, "no-price-index", false, "leave out @indices(sets: [[\"price\"]]) on Book (the sorted list then scans)")
	fs.StringVar(&cfg.domain, "domain", "", "domain of the bench instance (default bench.test on a fresh server, bench-<random>.test otherwise)")
	fs.DurationVar(&cfg.waitIdle, "wait-idle", cfg.waitIdle, "before each scenario, wait up to this long for other processes to go idle (0: don't)")
	fs.Float64Var(&cfg.idleMax, "idle-max", cfg.idleMax, "idle means other processes use at most this % of one core")
	fs.DurationVar(&cfg.timeout, "timeout", cfg.timeout, "time-out of one request")
	fs.Uint64Var(&cfg.rngSeed, "rand-seed", cfg.rngSeed, "seed of the random ids and values")
	fs.BoolVar(&cfg.keepGoing, "keep-going", false, "run the load even when a sanity check fails")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected arguments %q", fs.Args())}
	}
	if cfg.fanout.subscribers < 0 || cfg.fanout.writes < 1 || cfg.fanout.rate <= 0 || cfg.fanout.window < 1 {
		return usageError{"--subscribers must not be negative; --sub-writes, --sub-rate and --sub-window must be positive"}
	}
	if cfg.conc < 1 || cfg.reads < 1 || cfg.writes < 1 || cfg.logins < 1 || cfg.aggs < 1 || cfg.sqliteRuns < 1 || cfg.seed.batch < 1 || cfg.warmup < 0 {
		return usageError{"--conc, --reads, --writes, --logins, --aggregates, --sqlite-runs and --seed-batch must be positive"}
	}
	for name := range strings.SplitSeq(only, ",") {
		if name = strings.TrimSpace(name); name != "" {
			cfg.only = append(cfg.only, name)
		}
	}
	if cfg.domain == "" {
		cfg.domain = "bench.test"
		if so.target != "" || so.mongoURI != "" { // a store that may hold an earlier run
			cfg.domain = "bench-" + randomHex(4) + ".test"
		}
	}
	so.readAllowed()
	p := &progress{w: stderr}
	srv, err := startServer(ctx, so, p)
	if err != nil {
		return err
	}
	rep, err := runBench(ctx, srv, cfg, p)
	if err != nil {
		srv.failed = true
	}
	if serr := srv.stop(); serr != nil {
		err = errors.Join(err, serr)
	}
	if srv.dir != "" && (srv.failed || so.keep) {
		p.printf("work directory kept: %s (cored.log, data)", srv.dir)
	}
	if rep != nil {
		fmt.Fprint(stdout, rep.markdown())
	}
	return err
}
