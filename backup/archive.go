package backup

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"slices"
	"strings"
	"time"
)

// Archive formats and their version.
const (
	FormatBackup = "core-backup"
	Version      = 1
	manifestName = "manifest.json"
	sumsName     = "SHA256SUMS"
	// chunkSize is where an NDJSON entry is cut.
	chunkSize = 1 << 20
	// maxEntry bounds an entry a reader accepts, so that a hostile archive
	// cannot make it hold more: a chunk plus its last line, which may be
	// as long as the largest document (a function package chunk).
	maxEntry = 64 << 20
)

// Manifest is an archive's first entry.
type Manifest struct {
	Format   string    `json:"format"`
	Version  int       `json:"version"`
	Created  time.Time `json:"created"`
	Sections []string  `json:"sections"`
	// Instance names the instance of an export; empty in a backup.
	Instance json.RawMessage `json:"instance,omitempty"`
}

// Writer writes an archive: the manifest, then NDJSON and JSON entries,
// then SHA256SUMS on Close.
type Writer struct {
	gz   *gzip.Writer
	tw   *tar.Writer
	now  time.Time
	sums []string // "<hex>  <name>"
	// the NDJSON entry being filled
	prefix string
	buf    bytes.Buffer
	n      int // entries written under prefix
}

// NewWriter starts an archive on w with its manifest.
func NewWriter(w io.Writer, m Manifest) (*Writer, error) {
	aw := &Writer{gz: gzip.NewWriter(w), now: m.Created}
	aw.tw = tar.NewWriter(aw.gz)
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return aw, aw.entry(manifestName, raw)
}

// entry writes one whole entry.
func (w *Writer) entry(name string, data []byte) error {
	hdr := &tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: w.now, Typeflag: tar.TypeReg}
	if err := w.tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := w.tw.Write(data); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	w.sums = append(w.sums, hex.EncodeToString(sum[:])+"  "+name)
	return nil
}

// JSON writes v as the entry name.
func (w *Writer) JSON(name string, v any) error {
	if err := w.Flush(); err != nil {
		return err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.entry(name, raw)
}

// Line appends v as one line of the NDJSON entries under prefix (a
// folder such as "docs" or "instances/<id>/records"), cutting an entry
// when it passes chunkSize.
func (w *Writer) Line(prefix string, v any) error {
	if prefix != w.prefix {
		if err := w.Flush(); err != nil {
			return err
		}
		w.prefix, w.n = prefix, 0
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.buf.Write(raw)
	w.buf.WriteByte('\n')
	if w.buf.Len() >= chunkSize {
		return w.Flush()
	}
	return nil
}

// Content writes an entry of size bytes read from r as it goes (a file's
// content: never held whole), hashing it on the way. Its name must be in
// a folder named "files" (isContent), so that a Reader streams it back.
// r yielding more or fewer bytes than size fails the archive.
func (w *Writer) Content(name string, size int64, r io.Reader) error {
	if !isContent(name) {
		return fmt.Errorf("backup: content entry %q is not in a files folder", name)
	}
	hdr := &tar.Header{Name: name, Mode: 0o600, Size: size, ModTime: w.now, Typeflag: tar.TypeReg}
	if err := w.tw.WriteHeader(hdr); err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w.tw, h), io.LimitReader(r, size))
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("backup: content %s: %d bytes of %d", name, n, size)
	}
	w.sums = append(w.sums, hex.EncodeToString(h.Sum(nil))+"  "+name)
	return nil
}

// isContent reports whether an entry is a content: one in a folder named
// "files" ("files/<id>", "instances/<id>/files/<id>"). A Reader streams
// contents (Entry.Body) rather than read them whole.
func isContent(name string) bool { return path.Base(path.Dir(name)) == "files" }

// Flush writes the NDJSON lines not written yet as an entry.
func (w *Writer) Flush() error {
	if w.buf.Len() == 0 {
		return nil
	}
	w.n++
	name := fmt.Sprintf("%s/%06d.ndjson", w.prefix, w.n)
	err := w.entry(name, w.buf.Bytes())
	w.buf.Reset()
	return err
}

// Close writes SHA256SUMS and ends the archive (not the underlying
// writer).
func (w *Writer) Close() error {
	if err := w.Flush(); err != nil {
		return err
	}
	if err := w.entry(sumsName, []byte(strings.Join(w.sums, "\n")+"\n")); err != nil {
		return err
	}
	if err := w.tw.Close(); err != nil {
		return err
	}
	return w.gz.Close()
}

// Reader reads an archive entry by entry, checking each against
// SHA256SUMS when it meets it (the last entry): a reader learns that the
// archive is whole only when Next returns io.EOF.
type Reader struct {
	gz       *gzip.Reader
	tr       *tar.Reader
	Manifest Manifest
	sums     map[string]string // name → hex, as computed while reading
	// the content entry handed out last, whose rest next reads and hashes
	body *contentBody
}

// Entry is one entry of an archive: Data holds it whole, or, for a
// content (a file's bytes, of any size), Body reads it, until the next
// call of Next.
type Entry struct {
	Name string
	Data []byte
	Body io.Reader
	Size int64
}

// contentBody reads a content entry, hashing what it reads.
type contentBody struct {
	name string
	r    io.Reader // the tar entry
	h    hash.Hash
}

func (b *contentBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.h.Write(p[:n])
	return n, err
}

// ErrCorrupt: the archive is not whole or not one of Core's.
var ErrCorrupt = errors.New("backup: corrupt archive")

// NewReader reads the manifest of an archive and checks its format.
func NewReader(r io.Reader, format string) (*Reader, error) {
	gz, err := gzip.NewReader(bufio.NewReader(r))
	if err != nil {
		return nil, fmt.Errorf("%w: not gzip: %v", ErrCorrupt, err)
	}
	ar := &Reader{gz: gz, tr: tar.NewReader(gz), sums: map[string]string{}}
	e, err := ar.next()
	if err != nil {
		return nil, err
	}
	if e == nil || e.Name != manifestName {
		return nil, fmt.Errorf("%w: the first entry is not %s", ErrCorrupt, manifestName)
	}
	if err := json.Unmarshal(e.Data, &ar.Manifest); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, manifestName, err)
	}
	if ar.Manifest.Format != format {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrCorrupt, ar.Manifest.Format, format)
	}
	if ar.Manifest.Version != Version {
		return nil, fmt.Errorf("backup: archive version %d, this build reads %d", ar.Manifest.Version, Version)
	}
	return ar, nil
}

// next reads one entry; nil at the end of the tar.
func (r *Reader) next() (*Entry, error) {
	if b := r.body; b != nil {
		r.body = nil
		if _, err := io.Copy(io.Discard, b); err != nil {
			return nil, fmt.Errorf("%w: entry %q: %v", ErrCorrupt, b.name, err)
		}
		r.sums[b.name] = hex.EncodeToString(b.h.Sum(nil))
	}
	hdr, err := r.tr.Next()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if hdr.Typeflag == tar.TypeReg && hdr.Size >= 0 && isContent(hdr.Name) {
		r.body = &contentBody{name: hdr.Name, r: r.tr, h: sha256.New()}
		return &Entry{Name: hdr.Name, Body: r.body, Size: hdr.Size}, nil
	}
	if hdr.Typeflag != tar.TypeReg || hdr.Size < 0 || hdr.Size > maxEntry {
		return nil, fmt.Errorf("%w: entry %q is not a file of at most %d bytes", ErrCorrupt, hdr.Name, maxEntry)
	}
	data := make([]byte, hdr.Size)
	if _, err := io.ReadFull(r.tr, data); err != nil {
		return nil, fmt.Errorf("%w: entry %q: %v", ErrCorrupt, hdr.Name, err)
	}
	sum := sha256.Sum256(data)
	r.sums[hdr.Name] = hex.EncodeToString(sum[:])
	return &Entry{Name: hdr.Name, Data: data}, nil
}

// Next returns the next entry, or io.EOF after SHA256SUMS has matched
// every entry read. A missing, extra or changed entry is ErrCorrupt.
func (r *Reader) Next() (*Entry, error) {
	e, err := r.next()
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, fmt.Errorf("%w: it ends without %s (cut short?)", ErrCorrupt, sumsName)
	}
	if e.Name != sumsName {
		return e, nil
	}
	if err := r.checkSums(e.Data); err != nil {
		return nil, err
	}
	if more, err := r.next(); err != nil || more != nil {
		return nil, fmt.Errorf("%w: entries after %s", ErrCorrupt, sumsName)
	}
	return nil, io.EOF
}

func (r *Reader) checkSums(list []byte) error {
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			return fmt.Errorf("%w: %s: bad line %q", ErrCorrupt, sumsName, line)
		}
		want[name] = sum
	}
	for name, sum := range r.sums {
		if name == sumsName {
			continue
		}
		if want[name] != sum {
			return fmt.Errorf("%w: entry %s does not match its checksum", ErrCorrupt, name)
		}
		delete(want, name)
	}
	if len(want) > 0 {
		names := make([]string, 0, len(want))
		for n := range want {
			names = append(names, n)
		}
		slices.Sort(names)
		return fmt.Errorf("%w: entries missing: %s", ErrCorrupt, strings.Join(names, ", "))
	}
	return nil
}

// Verify reads a whole archive and checks its checksums.
func Verify(r io.Reader, format string) (Manifest, error) {
	ar, err := NewReader(r, format)
	if err != nil {
		return Manifest{}, err
	}
	for {
		_, err := ar.Next()
		if err == io.EOF {
			return ar.Manifest, nil
		}
		if err != nil {
			return Manifest{}, err
		}
	}
}
