package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/corehq/core/internal/periodic"
	"github.com/corehq/core/store"
)

// Dir is the folder where a server keeps the backups it takes (on demand
// through the admin API, or every Config.Every): one archive each, named
// core-<UTC time>.tar.gz, the newest Config.Keep kept. Safe for
// concurrent use; backups are taken one at a time.
type Dir struct {
	st   store.Store
	path string
	keep int
	mu   sync.Mutex // one backup at a time
}

// Info describes a kept backup.
type Info struct {
	Name    string    `json:"name"`
	Size    int64     `json:"size"`
	Created time.Time `json:"created"`
	SHA256  string    `json:"sha256,omitempty"`
}

// ErrNoBackup: no kept backup has the name asked for.
var ErrNoBackup = errors.New("backup: no such backup")

// nameRE is the name of a kept backup; nothing else in the folder is one.
var nameRE = regexp.MustCompile(`^core-\d{8}T\d{6}(\.\d+)?Z\.tar\.gz$`)

// NewDir keeps the backups of st in path (created when missing), the
// newest keep of them (0 keeps all).
func NewDir(st store.Store, path string, keep int) (*Dir, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	return &Dir{st: st, path: path, keep: keep}, nil
}

// Take takes a backup into the folder, then removes the oldest beyond
// the number kept.
func (d *Dir) Take(ctx context.Context) (Info, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now().UTC().Truncate(time.Millisecond)
	name := ""
	for { // one name per backup, even two in one millisecond
		name = "core-" + now.Format("20060102T150405.000") + "Z.tar.gz"
		if _, err := os.Stat(filepath.Join(d.path, name)); errors.Is(err, os.ErrNotExist) {
			break
		}
		now = now.Add(time.Millisecond)
	}
	tmp, err := os.CreateTemp(d.path, ".taking-*")
	if err != nil {
		return Info{}, fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	if _, err := Take(ctx, d.st, io.MultiWriter(tmp, h)); err != nil {
		tmp.Close()
		return Info{}, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return Info{}, fmt.Errorf("backup: %w", err)
	}
	fi, err := tmp.Stat()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Info{}, fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(d.path, name)); err != nil {
		return Info{}, fmt.Errorf("backup: %w", err)
	}
	info := Info{Name: name, Size: fi.Size(), Created: now, SHA256: hex.EncodeToString(h.Sum(nil))}
	return info, d.prune()
}

// prune removes the oldest backups beyond the number kept.
func (d *Dir) prune() error {
	if d.keep <= 0 {
		return nil
	}
	list, err := d.List()
	if err != nil {
		return err
	}
	for len(list) > d.keep {
		if err := os.Remove(filepath.Join(d.path, list[len(list)-1].Name)); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		list = list[:len(list)-1]
	}
	return nil
}

// List returns the kept backups, newest first.
func (d *Dir) List() ([]Info, error) {
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	var out []Info
	for _, e := range ents {
		if !nameRE.MatchString(e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, Info{Name: e.Name(), Size: fi.Size(), Created: createdOf(e.Name())})
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(b.Name, a.Name) })
	return out, nil
}

// createdOf reads the time in a backup's name.
func createdOf(name string) time.Time {
	s := strings.TrimSuffix(strings.TrimPrefix(name, "core-"), "Z.tar.gz")
	t, _ := time.Parse("20060102T150405.000", s)
	if t.IsZero() {
		t, _ = time.Parse("20060102T150405", s)
	}
	return t.UTC()
}

// Open opens a kept backup by name; ErrNoBackup when there is none.
func (d *Dir) Open(name string) (*os.File, error) {
	if !nameRE.MatchString(name) {
		return nil, ErrNoBackup
	}
	f, err := os.Open(filepath.Join(d.path, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoBackup
	}
	return f, err
}

// Schedule takes a backup every interval until ctx ends, reporting each
// failure to onError (internal/periodic).
func (d *Dir) Schedule(ctx context.Context, every time.Duration, onError func(error)) {
	periodic.Run(ctx, every, func(ctx context.Context) error {
		_, err := d.Take(ctx)
		return err
	}, onError)
}
