// Command ferretdb is the MongoDB-wire-compatible test server of Core's
// tests: FerretDB v1.24 over SQLite, started through its embeddable
// package (or, with -postgresql, over a PostgreSQL server: corebench
// measures on it, since FerretDB's SQLite backend serves one writer at a
// time and answers from an index only a lookup of _id). It is a module of
// its own so that FerretDB never enters the main module's dependencies;
// store/mongo/mongotest builds and starts it.
//
// It listens on -addr (a free loopback port by default), stores its SQLite
// files in -dir (removed at exit with -remove), prints its MongoDB URI as
// the first line on standard output, and stops when standard input reaches
// its end (the test process that started it exited) or on SIGINT/SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "TCP address to listen on")
	dir := flag.String("dir", "", "directory of the SQLite files (required)")
	remove := flag.Bool("remove", false, "remove -dir when stopping")
	pg := flag.String("postgresql", "", "store in this PostgreSQL database (a postgres:// URL) instead of SQLite files in -dir")
	flag.Parse()
	if *dir == "" && *pg == "" {
		fmt.Fprintln(os.Stderr, "ferretdb: -dir or -postgresql is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { // the parent's end of our standard input closes when it exits
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	cfg := &ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *addr},
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		Handler:   "sqlite",
		SQLiteURL: "file:" + *dir + "/",
	}
	if *pg != "" {
		cfg.Handler, cfg.SQLiteURL, cfg.PostgreSQLURL = "postgresql", "", *pg
	}
	f, err := ferretdb.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
	fmt.Println(f.MongoDBURI())
	err = f.Run(ctx)
	if *remove && *dir != "" {
		_ = os.RemoveAll(*dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}
