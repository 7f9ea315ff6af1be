package docfs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"

	storagedriver "github.com/distribution/distribution/v3/registry/storage/driver"

	"github.com/corehq/core/store"
)

// Name is the driver's name as the registry reports it.
const Name = "docfs"

// Store document kinds.
const (
	kindPrefix = "imgfs"      // + directory path with ':' for '/': the entries of a directory
	kindData   = "imgfs-data" // "<content id>/<index>": content chunks
)

// ChunkSize is the size of the content chunks: small enough for every
// store's document limit (16 MiB on MongoDB) and to bound a writer's
// memory, large enough that a layer is a few hundred documents.
const ChunkSize = 1 << 20

// inlineMax is the largest content PutContent keeps inside the entry.
const inlineMax = 16 << 10

// New returns the driver over st. Driver (checks.go) checks paths and
// types the errors the way every distribution driver does.
func New(st store.Store) *Driver {
	return &Driver{d: &driver{st: st, now: time.Now}}
}

// driver implements the file system; Driver checks what reaches it.
type driver struct {
	st  store.Store
	now func() time.Time
}

// entry is a file or directory as stored in its directory's kind.
type entry struct {
	Dir  bool      `json:"dir,omitempty"`
	Size int64     `json:"size,omitempty"`
	Mod  time.Time `json:"mod"`
	// Inline is the content of a small file written whole; Data names the
	// chunks of any other non-empty file.
	Inline []byte `json:"inline,omitempty"`
	Data   string `json:"data,omitempty"`
}

func (e *entry) chunks() int {
	if e.Data == "" {
		return 0
	}
	return int((e.Size + ChunkSize - 1) / ChunkSize)
}

// dirKind is the kind holding the entries of directory dir.
func dirKind(dir string) string {
	if dir == "/" {
		return kindPrefix + ":"
	}
	return kindPrefix + strings.ReplaceAll(dir, "/", ":")
}

func chunkKey(data string, i int) string { return fmt.Sprintf("%s/%d", data, i) }

// split returns the directory and base name of a path other than "/".
func split(p string) (dir, name string) {
	dir, name = path.Split(p)
	if dir != "/" {
		dir = strings.TrimSuffix(dir, "/")
	}
	return dir, name
}

func notFound(p string) error { return storagedriver.PathNotFoundError{Path: p, DriverName: Name} }

func (d *driver) Name() string { return Name }

// stat reads the entry of p; PathNotFoundError when there is none.
func (d *driver) stat(ctx context.Context, p string) (*entry, error) {
	if p == "/" {
		return &entry{Dir: true}, nil
	}
	dir, name := split(p)
	raw, err := d.st.GetDoc(ctx, dirKind(dir), name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(p)
	}
	if err != nil {
		return nil, err
	}
	var e entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("docfs: decoding the entry of %s: %w", p, err)
	}
	return &e, nil
}

// put writes the entry of p, after the entries of its missing parents.
func (d *driver) put(ctx context.Context, p string, e *entry) error {
	dir, name := split(p)
	if err := d.mkdirAll(ctx, dir); err != nil {
		return err
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("docfs: encoding the entry of %s: %w", p, err)
	}
	return d.st.PutDoc(ctx, dirKind(dir), name, raw)
}

// mkdirAll makes sure dir and its parents have directory entries. It
// stops at the first one that exists: its parents were made before it.
func (d *driver) mkdirAll(ctx context.Context, dir string) error {
	var missing []string
	for p := dir; p != "/"; p, _ = split(p) {
		e, err := d.stat(ctx, p)
		if err == nil {
			if !e.Dir {
				return fmt.Errorf("docfs: %s is a file, not a directory", p)
			}
			break
		}
		if !isNotFound(err) {
			return err
		}
		missing = append(missing, p)
	}
	// Outermost first, so that a crash never leaves an entry whose parent
	// cannot be listed.
	for i := len(missing) - 1; i >= 0; i-- {
		parent, name := split(missing[i])
		raw, err := json.Marshal(&entry{Dir: true, Mod: d.now().UTC()})
		if err != nil {
			return err
		}
		if err := d.st.PutDoc(ctx, dirKind(parent), name, raw); err != nil {
			return err
		}
	}
	return nil
}

func isNotFound(err error) bool {
	var nf storagedriver.PathNotFoundError
	return errors.As(err, &nf)
}

// dropData removes the chunks of a file's content.
func (d *driver) dropData(ctx context.Context, e *entry) error {
	for i := range e.chunks() {
		if err := d.st.DeleteDoc(ctx, kindData, chunkKey(e.Data, i)); err != nil {
			return err
		}
	}
	return nil
}

// GetContent returns a file's content.
func (d *driver) GetContent(ctx context.Context, p string) ([]byte, error) {
	e, err := d.stat(ctx, p)
	if err != nil {
		return nil, err
	}
	if e.Dir {
		return nil, notFound(p)
	}
	if e.Data == "" {
		return e.Inline, nil
	}
	r := &reader{d: d, ctx: ctx, e: e}
	buf := bytes.NewBuffer(make([]byte, 0, e.Size))
	if _, err := io.Copy(buf, r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PutContent replaces a file's content; small content is kept in the
// entry, larger content in chunks.
func (d *driver) PutContent(ctx context.Context, p string, content []byte) error {
	if len(content) > inlineMax {
		w, err := d.Writer(ctx, p, false)
		if err != nil {
			return err
		}
		if _, err := w.Write(content); err != nil {
			_ = w.Cancel(ctx)
			return err
		}
		return w.Commit(ctx)
	}
	old, err := d.stat(ctx, p)
	if err != nil && !isNotFound(err) {
		return err
	}
	if old != nil && old.Dir {
		return fmt.Errorf("docfs: %s is a directory", p)
	}
	if err := d.put(ctx, p, &entry{Size: int64(len(content)), Mod: d.now().UTC(), Inline: bytes.Clone(content)}); err != nil {
		return err
	}
	if old != nil {
		return d.dropData(ctx, old)
	}
	return nil
}

// Reader streams a file's content from offset, one chunk at a time.
func (d *driver) Reader(ctx context.Context, p string, offset int64) (io.ReadCloser, error) {
	e, err := d.stat(ctx, p)
	if err != nil {
		return nil, err
	}
	if e.Dir {
		return nil, notFound(p)
	}
	if offset > e.Size {
		return nil, storagedriver.InvalidOffsetError{Path: p, Offset: offset, DriverName: Name}
	}
	if e.Data == "" {
		return io.NopCloser(bytes.NewReader(e.Inline[offset:])), nil
	}
	return &reader{d: d, ctx: ctx, e: e, off: offset}, nil
}

// reader reads chunked content.
type reader struct {
	d   *driver
	ctx context.Context // the Reader call's: the registry reads within its request
	e   *entry
	off int64
	buf []byte // the rest of the current chunk
}

func (r *reader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		if r.off >= r.e.Size {
			return 0, io.EOF
		}
		i := int(r.off / ChunkSize)
		chunk, err := r.d.st.GetDoc(r.ctx, kindData, chunkKey(r.e.Data, i))
		if err != nil {
			return 0, fmt.Errorf("docfs: reading chunk %d of %s: %w", i, r.e.Data, err)
		}
		skip := r.off - int64(i)*ChunkSize
		if skip > int64(len(chunk)) {
			return 0, fmt.Errorf("docfs: chunk %d of %s is short", i, r.e.Data)
		}
		r.buf = chunk[skip:]
		if len(r.buf) == 0 {
			return 0, io.ErrUnexpectedEOF
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	r.off += int64(n)
	return n, nil
}

func (r *reader) Close() error { return nil }

// Writer returns a writer of a file's content: a new file (or a
// truncated one), or the existing content continued when continued is
// set (distribution calls it append).
// What is written is visible once the writer is closed or committed.
func (d *driver) Writer(ctx context.Context, p string, continued bool) (storagedriver.FileWriter, error) {
	old, err := d.stat(ctx, p)
	if err != nil && !isNotFound(err) {
		return nil, err
	}
	if old != nil && old.Dir {
		return nil, fmt.Errorf("docfs: %s is a directory", p)
	}
	w := &writer{d: d, ctx: ctx, path: p, data: store.NewID(), buf: make([]byte, 0, ChunkSize), old: old}
	if continued && old != nil {
		switch {
		case old.Data != "":
			// Continue the chunks: the last, partial one is read back and
			// rewritten as it grows.
			w.data, w.size, w.old = old.Data, old.Size, nil
			w.index = int(old.Size / ChunkSize)
			if tail := old.Size % ChunkSize; tail > 0 {
				chunk, err := d.st.GetDoc(ctx, kindData, chunkKey(old.Data, w.index))
				if err != nil {
					return nil, fmt.Errorf("docfs: reading the last chunk of %s: %w", p, err)
				}
				if int64(len(chunk)) != tail {
					return nil, fmt.Errorf("docfs: the last chunk of %s has %d bytes, want %d", p, len(chunk), tail)
				}
				w.buf = append(w.buf, chunk...)
			}
		default:
			// Inline content becomes the first chunk.
			w.buf = append(w.buf, old.Inline...)
			w.size = int64(len(old.Inline))
		}
	}
	return w, nil
}

// writer writes chunked content; it holds at most one chunk.
type writer struct {
	d    *driver
	ctx  context.Context
	path string
	data string // content id
	// index is the chunk buf will be written as; size counts every byte
	// written, buf's included.
	index int
	size  int64
	buf   []byte
	old   *entry // the replaced file, whose chunks go once the new entry is written

	closed, committed, canceled bool
}

func (w *writer) Write(p []byte) (int, error) {
	if err := w.usable(); err != nil {
		return 0, err
	}
	n := 0
	for len(p) > 0 {
		k := min(len(p), ChunkSize-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p, n, w.size = p[k:], n+k, w.size+int64(k)
		if len(w.buf) == ChunkSize {
			if err := w.flush(); err != nil {
				return n, err
			}
			w.buf, w.index = w.buf[:0], w.index+1
		}
	}
	return n, nil
}

func (w *writer) usable() error {
	switch {
	case w.closed:
		return errors.New("docfs: writer already closed")
	case w.committed:
		return errors.New("docfs: writer already committed")
	case w.canceled:
		return errors.New("docfs: writer already canceled")
	}
	return nil
}

// flush writes buf as chunk index (rewriting a partial chunk written by
// an earlier close).
func (w *writer) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if err := w.d.st.PutDoc(w.ctx, kindData, chunkKey(w.data, w.index), w.buf); err != nil {
		return fmt.Errorf("docfs: writing chunk %d of %s: %w", w.index, w.path, err)
	}
	return nil
}

func (w *writer) Size() int64 { return w.size }

// finish writes the last chunk and the entry that makes the content
// visible, then drops the replaced content.
func (w *writer) finish() error {
	if err := w.flush(); err != nil {
		return err
	}
	e := &entry{Size: w.size, Mod: w.d.now().UTC()}
	if w.size > 0 {
		e.Data = w.data
	}
	if err := w.d.put(w.ctx, w.path, e); err != nil {
		return err
	}
	if w.old != nil {
		old := w.old
		w.old = nil
		return w.d.dropData(w.ctx, old)
	}
	return nil
}

// Close makes what was written visible; the file may be continued by a
// later Writer with append.
func (w *writer) Close() error {
	if w.closed {
		return errors.New("docfs: writer already closed")
	}
	w.closed = true
	if w.committed || w.canceled {
		return nil
	}
	return w.finish()
}

// Commit makes what was written visible; nothing more can be written.
func (w *writer) Commit(context.Context) error {
	if err := w.usable(); err != nil {
		return err
	}
	w.committed = true
	return w.finish()
}

// Cancel removes the file and everything written to it.
func (w *writer) Cancel(ctx context.Context) error {
	if w.closed {
		return errors.New("docfs: writer already closed")
	}
	w.canceled = true
	w.buf = nil
	for i := range int((w.size + ChunkSize - 1) / ChunkSize) {
		if err := w.d.st.DeleteDoc(ctx, kindData, chunkKey(w.data, i)); err != nil {
			return err
		}
	}
	dir, name := split(w.path)
	return w.d.st.DeleteDoc(ctx, dirKind(dir), name)
}

// fileInfo is what Stat answers.
type fileInfo struct {
	path string
	e    *entry
}

func (f fileInfo) Path() string       { return f.path }
func (f fileInfo) Size() int64        { return f.e.Size }
func (f fileInfo) ModTime() time.Time { return f.e.Mod }
func (f fileInfo) IsDir() bool        { return f.e.Dir }

// Stat describes a file or directory.
func (d *driver) Stat(ctx context.Context, p string) (storagedriver.FileInfo, error) {
	e, err := d.stat(ctx, p)
	if err != nil {
		return nil, err
	}
	return fileInfo{path: p, e: e}, nil
}

// List returns the paths of a directory's entries.
func (d *driver) List(ctx context.Context, p string) ([]string, error) {
	e, err := d.stat(ctx, p)
	if err != nil {
		return nil, err
	}
	if !e.Dir {
		return nil, fmt.Errorf("docfs: %s is not a directory", p)
	}
	docs, err := d.st.ListDocs(ctx, dirKind(p))
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(docs))
	for name := range docs {
		out = append(out, path.Join(p, name))
	}
	return out, nil
}

// Move renames a file, replacing any file at dest; the content stays
// where it is.
func (d *driver) Move(ctx context.Context, src, dest string) error {
	e, err := d.stat(ctx, src)
	if err != nil {
		return err
	}
	if e.Dir {
		return fmt.Errorf("docfs: moving directories is not supported (%s)", src)
	}
	old, err := d.stat(ctx, dest)
	if err != nil && !isNotFound(err) {
		return err
	}
	if old != nil && old.Dir {
		return fmt.Errorf("docfs: %s is a directory", dest)
	}
	if err := d.put(ctx, dest, e); err != nil {
		return err
	}
	dir, name := split(src)
	if err := d.st.DeleteDoc(ctx, dirKind(dir), name); err != nil {
		return err
	}
	if old != nil && old.Data != e.Data {
		return d.dropData(ctx, old)
	}
	return nil
}

// Delete removes a file, or a directory with everything under it.
func (d *driver) Delete(ctx context.Context, p string) error {
	e, err := d.stat(ctx, p)
	if err != nil {
		return err
	}
	return d.delete(ctx, p, e)
}

func (d *driver) delete(ctx context.Context, p string, e *entry) error {
	if e.Dir {
		docs, err := d.st.ListDocs(ctx, dirKind(p))
		if err != nil {
			return err
		}
		for name, raw := range docs {
			var child entry
			if err := json.Unmarshal(raw, &child); err != nil {
				return fmt.Errorf("docfs: decoding the entry of %s: %w", path.Join(p, name), err)
			}
			if err := d.delete(ctx, path.Join(p, name), &child); err != nil {
				return err
			}
		}
		if p == "/" {
			return nil
		}
	}
	dir, name := split(p)
	// The entry goes first: a reader holding it may still read the chunks
	// until they go too, and no entry is left naming missing chunks.
	if err := d.st.DeleteDoc(ctx, dirKind(dir), name); err != nil {
		return err
	}
	return d.dropData(ctx, e)
}

// RedirectURL answers no URL: clients fetch blobs from the registry.
func (d *driver) RedirectURL(*http.Request, string) (string, error) { return "", nil }

// Walk visits every file and directory under p (distribution's generic
// walk over List and Stat).
func (d *driver) Walk(ctx context.Context, p string, f storagedriver.WalkFn, options ...func(*storagedriver.WalkOptions)) error {
	return storagedriver.WalkFallback(ctx, d, p, f, options...)
}
