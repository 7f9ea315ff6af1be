package keyring

import (
	"context"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corehq/core/internal/periodic"
)

// Keeper holds the ring a process uses now, and its sealer: the one read
// from the key file at start, replaced when the file changes (Reload,
// Watch). Readers take the current ring with one atomic load. Safe for
// concurrent use.
type Keeper struct {
	path string // "" for a ring held in memory (Hold)
	cur  atomic.Pointer[held]

	mu   sync.Mutex  // serialises Reload
	info fs.FileInfo // what the current ring was read from
}

// held is one ring with its sealer.
type held struct {
	ring   *Ring
	sealer *Sealer
}

// Hold returns a Keeper of r, with no file behind it.
func Hold(r *Ring) *Keeper {
	k := &Keeper{}
	k.cur.Store(&held{ring: r, sealer: r.Sealer()})
	return k
}

// OpenFile returns a Keeper of the key file at path (ReadFile's checks
// and errors).
func OpenFile(path string) (*Keeper, error) {
	r, info, err := readFile(path)
	if err != nil {
		return nil, err
	}
	k := &Keeper{path: path, info: info}
	k.cur.Store(&held{ring: r, sealer: r.Sealer()})
	return k, nil
}

// Path is the key file's path ("" for a held ring).
func (k *Keeper) Path() string { return k.path }

// Ring returns the current ring.
func (k *Keeper) Ring() *Ring { return k.cur.Load().ring }

// Seal seals plain under the current ring's active key (Sealer.Seal).
func (k *Keeper) Seal(plain []byte, aad string) string { return k.cur.Load().sealer.Seal(plain, aad) }

// Open opens a sealed value with the current ring (Sealer.Open).
func (k *Keeper) Open(sealed, aad string) ([]byte, bool, error) {
	return k.cur.Load().sealer.Open(sealed, aad)
}

// Reload reads the key file again when it changed since it was last read
// (another file renamed over it, or a new modification time or size), and
// reports whether the ring is new. A file that no longer reads (removed,
// malformed, readable by others) is an error and the current ring stays.
func (k *Keeper) Reload() (bool, error) {
	if k.path == "" {
		return false, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	info, err := os.Stat(k.path)
	if err == nil && os.SameFile(info, k.info) && info.ModTime().Equal(k.info.ModTime()) && info.Size() == k.info.Size() &&
		info.Mode() == k.info.Mode() {
		return false, nil
	}
	r, info, err := readFile(k.path)
	if err != nil {
		return false, err
	}
	k.info = info
	if string(r.Marshal()) == string(k.Ring().Marshal()) {
		return false, nil
	}
	k.cur.Store(&held{ring: r, sealer: r.Sealer()})
	return true, nil
}

// Watch calls Reload every interval until ctx ends; each new ring goes to
// onChange, each failure to onErr (the current ring stays in use).
func (k *Keeper) Watch(ctx context.Context, interval time.Duration, onChange func(*Ring), onErr func(error)) {
	periodic.Run(ctx, interval, func(context.Context) error {
		changed, err := k.Reload()
		if changed && onChange != nil {
			onChange(k.Ring())
		}
		return err
	}, onErr)
}
