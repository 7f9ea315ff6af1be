// Command cored is the one binary of Core: it serves the service
// (`cored serve`), applies an app directory to a running server
// (`cored deploy DIR`), manages the key file (`cored keys`) and prints its
// version (`cored version`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

const usage = `cored: a multi-tenant application data service

Usage:
  cored serve [flags]        run the service (cored serve -h for flags)
  cored serve --demo         run it with the demo app deployed on demo.local
  cored deploy [flags] DIR   apply DIR/app.yaml to a running server
  cored keys init|list|rotate|add|activate|retire   manage the key file (cored keys -h)
  cored backup (--from URL | --data DIR) OUT.tar.gz   back up everything the store holds
  cored restore IN.tar.gz (--data DIR | --mongo-uri URI)   restore a backup into an empty store
  cored healthcheck [--addr]  exit 0 when the server there answers /healthz (for containers)
  cored version              print the version
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run runs one command and returns the process exit status. It reads the
// environment only through getenv, so tests call it in process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], getenv, stdout, stderr)
	case "deploy":
		err = deploy(ctx, args[1:], getenv, stdout, stderr)
	case "keys":
		err = keysCmd(args[1:], getenv, stdout, stderr)
	case "backup":
		err = backupCmd(ctx, args[1:], getenv, stdout, stderr)
	case "restore":
		err = restoreCmd(ctx, args[1:], getenv, stdout, stderr)
	case "healthcheck":
		err = healthcheck(ctx, args[1:], getenv, stderr)
	case "version":
		fmt.Fprintln(stdout, "cored", versionString())
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "cored: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintf(stderr, "cored %s: %v\n", args[0], err)
		return 2
	default:
		fmt.Fprintf(stderr, "cored %s: %v\n", args[0], err)
		return 1
	}
}

// usageError is a mistake in the command line (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// parseFlags parses args with fs, allowing flags after the positional
// arguments too (`cored deploy DIR --server …`), and returns the
// positional ones.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// envOr returns the environment variable name, or def when it is unset.
func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}
