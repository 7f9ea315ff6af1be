package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/corehq/core/backup"
	"github.com/corehq/core/hooks"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt"
	"github.com/corehq/core/store/mongo"
	"github.com/corehq/core/tenant"
)

// openBackups is the server's folder of backups and how often it takes
// one (0: only when asked).
func openBackups(f serveFlags, st store.Store) (*backup.Dir, time.Duration, error) {
	var every time.Duration
	if f.backupEvery != "" {
		d, err := time.ParseDuration(f.backupEvery)
		if err != nil || d < time.Minute {
			return nil, 0, usageError{fmt.Sprintf("--backup-every %q: a duration of at least 1m, e.g. 6h", f.backupEvery)}
		}
		every = d
	}
	if f.backupKeep < 0 {
		return nil, 0, usageError{fmt.Sprintf("--backup-keep %d: 0 or more", f.backupKeep)}
	}
	path := f.backupDir
	if path == "" {
		path = filepath.Join(f.data, "backups")
	}
	dir, err := backup.NewDir(st, path, f.backupKeep)
	return dir, every, err
}

// backupCmd writes a backup of a stopped data directory (--data) or of a
// running server (--from, through its admin API) to OUT.
func backupCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := commandFlags("backup", stderr, "Usage: cored backup (--from URL | --data DIR | --mongo-uri URI) OUT.tar.gz\n\n"+
		"Writes a backup of everything the store holds (never the key file: carry core.keys apart). Flags:\n")
	from := fs.String("from", "", "base URL of a running server, e.g. http://127.0.0.1:8080 (its admin API takes the backup)")
	data := fs.String("data", "", "a data directory whose server is stopped")
	mongoURI := fs.String("mongo-uri", "", "a MongoDB database (default $CORE_MONGO_URI when neither --from nor --data is given)")
	token := fs.String("admin-token", "", "admin token for --from (default $CORE_ADMIN_TOKEN)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"want exactly one output file (cored backup --data DIR OUT.tar.gz)"}
	}
	if *from == "" && *data == "" && *mongoURI == "" {
		*mongoURI = getenv("CORE_MONGO_URI")
	}
	if n := btoi(*from != "") + btoi(*data != "") + btoi(*mongoURI != ""); n != 1 {
		return usageError{"want one of --from, --data and --mongo-uri"}
	}
	out := pos[0]
	write := func(w io.Writer) error {
		if *from != "" {
			if *token == "" {
				*token = getenv("CORE_ADMIN_TOKEN")
			}
			if *token == "" {
				return usageError{"the admin token is required with --from: set CORE_ADMIN_TOKEN or pass --admin-token"}
			}
			return fetchBackup(ctx, strings.TrimRight(*from, "/"), *token, w)
		}
		st, err := openForCmd(ctx, *data, *mongoURI, true)
		if err != nil {
			return err
		}
		defer st.Close()
		_, err = backup.Take(ctx, st, w)
		return err
	}
	if err := writeFile(out, write); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backup written to %s\n", out)
	return nil
}

// commandFlags is the flag set of a command, printing usage then the
// flags on -h.
func commandFlags(name string, stderr io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	return fs
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// writeFile writes path whole or not at all: a temporary file beside it,
// renamed when write succeeds.
func writeFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// fetchBackup asks a server to take a backup (POST /admin/v1/backups) and
// downloads it.
func fetchBackup(ctx context.Context, base, token string, w io.Writer) error {
	c := &adminClient{base: base + "/admin/v1", token: token, hc: &http.Client{Timeout: time.Hour}}
	var info backup.Info
	if _, err := c.do(ctx, http.MethodPost, "/backups", nil, &info); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/backups/"+info.Name, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		return errors.New(describeFailure(res.StatusCode, body))
	}
	_, err = io.Copy(w, res.Body)
	return err
}

// openForCmd opens the store of a stopped data directory or a MongoDB
// database for backup and restore.
func openForCmd(ctx context.Context, data, mongoURI string, existing bool) (store.Store, error) {
	if mongoURI != "" {
		return mongo.Open(ctx, mongo.DefaultConfig(mongoURI))
	}
	if existing {
		// A mistyped path must not make an empty store and back it up.
		if _, err := os.Stat(filepath.Join(data, "core.db")); err != nil {
			return nil, fmt.Errorf("%s holds no data directory's store (core.db): %w", data, err)
		}
	} else if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, err
	}
	cfg := bolt.DefaultConfig()
	cfg.OpenTimeout = time.Second
	st, err := bolt.Open(filepath.Join(data, "core.db"), cfg)
	if errors.Is(err, store.ErrUnavailable) {
		return nil, fmt.Errorf("%s is in use by a running server: back it up with --from, or stop it", data)
	}
	return st, err
}

// restoreCmd puts a backup into an empty store: a data directory or a
// MongoDB database.
func restoreCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := commandFlags("restore", stderr, "Usage: cored restore IN.tar.gz (--data DIR | --mongo-uri URI)\n\n"+
		"Restores a backup into an empty store. Copy the key file (core.keys) beside it yourself. Flags:\n")
	data := fs.String("data", "", "an empty (or new) data directory")
	mongoURI := fs.String("mongo-uri", "", "an empty MongoDB database (default $CORE_MONGO_URI when --data is not given)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"want exactly one backup file (cored restore IN.tar.gz --data DIR)"}
	}
	if *data == "" && *mongoURI == "" {
		*mongoURI = getenv("CORE_MONGO_URI")
	}
	if (*data == "") == (*mongoURI == "") {
		return usageError{"want one of --data and --mongo-uri"}
	}
	// The whole archive is checked before anything is written.
	f, err := os.Open(pos[0])
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := backup.Verify(f, backup.FormatBackup); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	st, err := openForCmd(ctx, *data, *mongoURI, false)
	if err != nil {
		return err
	}
	defer st.Close()
	m, err := backup.Restore(ctx, st, f, func(ctx context.Context) error { return tenant.DeclareStored(ctx, st) })
	if err != nil {
		return err
	}
	// The restored change feeds start over: the event hooks start at them.
	if err := hooks.Restarted(ctx, st); err != nil {
		return fmt.Errorf("restore: the event hooks' positions in the change feed: %w", err)
	}
	fmt.Fprintf(stdout, "restored the backup of %s\n", m.Created.Format(time.RFC3339))
	return nil
}
