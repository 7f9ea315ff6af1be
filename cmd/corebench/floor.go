package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/labstack/echo/v4"
)

// runFloorCmd is `corebench floor`: a bare echo handler, the floor a GET
// by id is measured against in CPU per request. It answers GET /floor/{id}
// with {"id": "<id>"} through echo and net/http, as cored's routes are
// served, with nothing of cored's: no middleware, no request log, no
// store. Load it with the peer-comparison scripts' run-scenarios.sh, the
// server pinned to one core as compare.sh pins its servers (docs/benchmarks.md,
// "Side by side with PocketBase").
func runFloorCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("corebench floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:18777", "address to listen on")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: corebench floor [-addr host:port]\n\nServes GET /floor/{id} with a bare echo handler until interrupted.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("floor: unexpected arguments %q", fs.Args())}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.GET("/floor/:id", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"id": c.Param("id")})
	})
	srv := &http.Server{Handler: e}
	fmt.Fprintf(stdout, "serving GET http://%s/floor/{id}\n", ln.Addr())
	stop := context.AfterFunc(ctx, func() { srv.Close() })
	defer stop()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
