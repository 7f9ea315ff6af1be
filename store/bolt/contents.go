package bolt

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"io"

	"github.com/corehq/core/store"
)

// Contents returns the store's file contents: files under the directory
// "files" beside the store's file (the data directory), one directory per
// instance and one file per content, named by its id. A Put writes into
// "files/.partial" and renames the whole, hashed file into place (synced
// first unless the store runs without fsync), so a content is never seen
// in part and a crash leaves at most a partial file, which Sweep removes.
func (s *Store) Contents() store.Contents {
	return &dirContents{root: filepath.Join(filepath.Dir(s.db.Path()), "files"), sync: !s.db.NoSync}
}

// dirContents is store.Contents on a directory.
type dirContents struct {
	root string
	sync bool
}

// partial is the directory of contents being written.
const partial = ".partial"

func (d *dirContents) path(inst, id string) string { return filepath.Join(d.root, inst, id) }

func (d *dirContents) Put(ctx context.Context, inst, id string, r io.Reader, limit int64) (store.Written, error) {
	if err := store.CheckContentName(inst, id); err != nil {
		return store.Written{}, err
	}
	tmpDir := filepath.Join(d.root, partial)
	if err := os.MkdirAll(tmpDir, 0o700); err != nil {
		return store.Written{}, err
	}
	f, err := os.CreateTemp(tmpDir, "put-*")
	if err != nil {
		return store.Written{}, err
	}
	placed := false
	defer func() {
		if !placed {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	var dst io.Writer = f
	if d.sync {
		dst = newWriteback(f)
	}
	w, err := store.CopyContent(ctx, dst, r, limit)
	if err != nil {
		return store.Written{}, err
	}
	if d.sync {
		if err := f.Sync(); err != nil {
			return store.Written{}, err
		}
	}
	if err := f.Close(); err != nil {
		return store.Written{}, err
	}
	dir := filepath.Join(d.root, inst)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return store.Written{}, err
	}
	if err := os.Rename(f.Name(), d.path(inst, id)); err != nil {
		return store.Written{}, err
	}
	placed = true
	if d.sync {
		if err := syncDir(dir); err != nil {
			return store.Written{}, err
		}
	}
	return w, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func (d *dirContents) Open(ctx context.Context, inst, id string) (store.Content, error) {
	if store.CheckContentName(inst, id) != nil {
		return nil, store.ErrNotFound
	}
	f, err := os.Open(d.path(inst, id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return fileContent{f, st.Size()}, nil
}

// fileContent is an open content file.
type fileContent struct {
	*os.File
	size int64
}

func (c fileContent) Size() int64 { return c.size }

// OSFile is the content's file: a download hands it to the connection
// whole (sendfile) instead of copying it through a buffer.
func (c fileContent) OSFile() *os.File { return c.File }

func (d *dirContents) Delete(ctx context.Context, inst, id string) error {
	if store.CheckContentName(inst, id) != nil {
		return nil
	}
	if err := os.Remove(d.path(inst, id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (d *dirContents) DropInstance(ctx context.Context, inst string) error {
	if store.CheckContentName(inst, "x") != nil {
		return nil
	}
	return os.RemoveAll(filepath.Join(d.root, inst))
}

func (d *dirContents) Sweep(ctx context.Context, before time.Time, has func(ctx context.Context, inst, id string) (bool, error)) (int, error) {
	removed := 0
	insts, err := os.ReadDir(d.root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	for _, inst := range insts {
		if !inst.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(d.root, inst.Name()))
		if err != nil {
			return removed, err
		}
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return removed, err
			}
			info, err := f.Info()
			if err != nil || !info.ModTime().Before(before) {
				continue // gone meanwhile, or too new to judge
			}
			keep := false
			if inst.Name() != partial {
				if keep, err = has(ctx, inst.Name(), f.Name()); err != nil {
					return removed, err
				}
			}
			if !keep {
				if err := os.Remove(filepath.Join(d.root, inst.Name(), f.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return removed, err
				}
				removed++
			}
		}
	}
	return removed, nil
}
