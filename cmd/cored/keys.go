package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/keyring"
	"github.com/corehq/core/oci"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// keyFileName is the key file's name in the data directory, beside (not
// inside) the embedded store's core.db: a copy of core.db holds no key.
const keyFileName = "core.keys"

// keyPath is the key file a command uses: --key-file, else core.keys in
// the data directory.
func keyPath(keyFile, data string) string {
	if keyFile != "" {
		return keyFile
	}
	return filepath.Join(data, keyFileName)
}

// openKeys opens the key file of serve. On the embedded store without
// --key-file, the first start makes one in the data directory (made
// reports it); a key file that was named, or any key file on MongoDB,
// must exist: processes on one database must share one, so none makes
// its own.
func openKeys(f serveFlags) (keys *keyring.Keeper, made bool, err error) {
	path := keyPath(f.keyFile, f.data)
	keys, err = keyring.OpenFile(path)
	if err == nil || !errors.Is(err, keyring.ErrNoFile) {
		if err != nil {
			err = fmt.Errorf("the key file (--key-file / CORE_KEY_FILE): %w", err)
		}
		return keys, false, err
	}
	switch {
	case f.mongoURI != "" && f.keyFile == "":
		return nil, false, errors.New("on MongoDB a key file is required, the same for every process: " +
			"make one with `cored keys init --key-file FILE`, then give each process --key-file FILE (or CORE_KEY_FILE)")
	case f.keyFile != "":
		return nil, false, fmt.Errorf("the key file %s does not exist: make one with `cored keys init --key-file %s`, or restore it from its backup", path, path)
	}
	if err := os.MkdirAll(f.data, 0o700); err != nil {
		return nil, false, fmt.Errorf("creating the data directory: %w", err)
	}
	if err := keyring.CreateFile(path, keyring.Generate()); err != nil {
		return nil, false, err
	}
	keys, err = keyring.OpenFile(path)
	return keys, err == nil, err
}

// migrateSecrets brings the store of an older version up to the key
// ring at start: the instances' env values it kept in clear are sealed,
// and the session secret it kept in the store is removed (a copy of the
// store held it; the sessions it signed end, once).
func migrateSecrets(ctx context.Context, st store.Store, reg *tenant.Directory, log *zap.Logger) error {
	n, err := reg.Reseal(ctx)
	if err != nil {
		return fmt.Errorf("sealing the instances' env values: %w", err)
	}
	if n > 0 {
		log.Info("sealed instance env values with the active key", zap.Int("instances", n))
	}
	dropped, err := auth.DropStoredSecret(ctx, st)
	if err != nil {
		return err
	}
	if dropped {
		log.Warn("removed the session secret an older version kept in the store: the sessions it issued have ended; users log in again")
	}
	return nil
}

// resealSecrets seals again, with the active key, what the store keeps
// sealed with an older one, after the key ring changed.
func resealSecrets(ctx context.Context, reg *tenant.Directory, imgs *oci.Registry, log *zap.Logger) {
	n, err := reg.Reseal(ctx)
	if err != nil {
		log.Warn("sealing the instances' env values with the new active key failed", zap.Error(err))
	} else if n > 0 {
		log.Info("sealed instance env values with the active key", zap.Int("instances", n))
	}
	if err := imgs.Reseal(ctx); err != nil {
		log.Warn("sealing the registry's upload secret with the new active key failed", zap.Error(err))
	}
}

const keysUsage = `Usage:
  cored keys init   [--key-file FILE | --data DIR]      make a new key file (refuses to replace one)
  cored keys list   [--key-file FILE | --data DIR]      show the keys' ids, which is active, when each was made
  cored keys rotate [--key-file FILE | --data DIR]      add a new active key; the others still verify
  cored keys add    [--key-file FILE | --data DIR]      add a new key, not active yet (it verifies)
  cored keys activate [--key-file FILE | --data DIR] ID  make key ID the one that signs and seals
  cored keys retire [--key-file FILE | --data DIR] ID   remove key ID: sessions signed with it end

The key file is --key-file ($CORE_KEY_FILE), else core.keys in --data
($CORE_DATA_DIR, default ./data). Running servers read it again within
2 seconds of a change. docs/keys-and-secrets.md explains when to rotate and
when a key may be retired.
`

// keysCmd runs `cored keys`.
func keysCmd(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, keysUsage)
		if len(args) == 0 {
			return usageError{"keys needs a subcommand: init, list, rotate, add, activate or retire"}
		}
		return nil
	}
	sub := args[0]
	fs := flag.NewFlagSet("keys "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	keyFile := fs.String("key-file", envOr(getenv, "CORE_KEY_FILE", ""), "the key file ($CORE_KEY_FILE)")
	data := fs.String("data", envOr(getenv, "CORE_DATA_DIR", "./data"), "data directory whose core.keys to use when --key-file is not given ($CORE_DATA_DIR)")
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	path := keyPath(*keyFile, *data)
	wantArgs := 0
	if sub == "retire" || sub == "activate" {
		wantArgs = 1
	}
	if len(pos) != wantArgs {
		return usageError{fmt.Sprintf("keys %s takes %d argument(s), got %q\n\n%s", sub, wantArgs, pos, keysUsage)}
	}
	switch sub {
	case "init":
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("creating the key file's directory: %w", err)
		}
		if err := keyring.CreateFile(path, keyring.Generate()); err != nil {
			return err
		}
		r, err := keyring.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "made %s with key %s (active); back it up apart from the database\n", path, r.Active())
		return nil
	case "list":
		r, err := keyring.ReadFile(path)
		if err != nil {
			return err
		}
		for _, k := range r.Keys() {
			state := "verifies"
			if k.ID == r.Active() {
				state = "active"
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\n", k.ID, k.Created.Format(time.RFC3339), state)
		}
		return nil
	case "rotate", "add", "activate", "retire":
		return changeKeys(path, func(r *keyring.Ring) (*keyring.Ring, string, error) {
			switch sub {
			case "rotate":
				next, _, err := r.Rotate()
				if err != nil {
					return nil, "", err
				}
				return next, activeNote(next, path), nil
			case "add":
				next, k, err := r.Add()
				return next, fmt.Sprintf("key %s added to %s, not active: once every process has read the file, cored keys activate %s", k.ID, path, k.ID), err
			case "activate":
				next, err := r.Activate(pos[0])
				if err != nil {
					return nil, "", err
				}
				return next, activeNote(next, path), nil
			default:
				next, err := r.Retire(pos[0])
				return next, fmt.Sprintf("key %s retired from %s: the sessions it signed end", pos[0], path), err
			}
		}, stdout)
	}
	return usageError{fmt.Sprintf("keys: unknown subcommand %q\n\n%s", sub, keysUsage)}
}

// changeKeys reads the key file at path, changes its ring with change,
// writes the new ring in its place and prints what change says.
func changeKeys(path string, change func(*keyring.Ring) (*keyring.Ring, string, error), stdout io.Writer) error {
	r, err := keyring.ReadFile(path)
	if err != nil {
		return err
	}
	next, note, err := change(r)
	if err != nil {
		return err
	}
	if err := keyring.WriteFile(path, next); err != nil {
		return err
	}
	fmt.Fprintln(stdout, note)
	return nil
}

// activeNote says which key of r is active, and which still verify.
func activeNote(r *keyring.Ring, path string) string {
	var others []string
	for _, k := range r.Keys() {
		if k.ID != r.Active() {
			others = append(others, k.ID)
		}
	}
	return fmt.Sprintf("key %s is active in %s; %s still verify until retired (cored keys retire ID)", r.Active(), path, strings.Join(others, ", "))
}
