package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"
)

// ErrTooLarge: a content is longer than the limit it was written with;
// nothing of it is kept.
var ErrTooLarge = errors.New("store: content too large")

// Contents keeps the bytes of an instance's uploaded files beside its
// records: the embedded store in files under its data directory
// (bolt.Store.Contents), MongoDB in GridFS of the same database
// (mongo.Store.Contents). A content is named by its instance and the id
// of the File record that describes it; the record is written after the
// content is in place, so a content without a record is what an upload
// interrupted between the two leaves, and Sweep collects it. Every method
// is safe for concurrent use; store/storetest.RunContents is the suite
// every implementation passes.
type Contents interface {
	// Put reads r to its end into the content of (inst, id), hashing it
	// as it goes, and puts it in place only once it is whole: a reader
	// never sees part of a content. More than limit bytes fails with
	// ErrTooLarge (limit <= 0: no limit); any failure keeps nothing. ids
	// are new: an upload never puts one twice.
	Put(ctx context.Context, inst, id string, r io.Reader, limit int64) (Written, error)
	// Open returns a content for reading; ErrNotFound when absent.
	Open(ctx context.Context, inst, id string) (Content, error)
	// Delete removes a content; a missing one is not an error.
	Delete(ctx context.Context, inst, id string) error
	// DropInstance removes every content of an instance.
	DropInstance(ctx context.Context, inst string) error
	// Sweep removes what interrupted writes left: partial contents, and
	// every content put before before whose record has says is absent.
	// It returns how many contents it removed.
	Sweep(ctx context.Context, before time.Time, has func(ctx context.Context, inst, id string) (bool, error)) (int, error)
}

// Written is what Put kept.
type Written struct {
	// Size is the content's length in bytes.
	Size int64
	// SHA256 is the hex SHA-256 of the content.
	SHA256 string
}

// Content is a content open for reading, which the caller closes.
type Content interface {
	io.ReadSeekCloser
	// Size is the content's length in bytes.
	Size() int64
}

// ContentsHolder is a store that keeps file contents beside its records.
type ContentsHolder interface {
	Contents() Contents
}

// CopyContent copies r to w as Contents.Put reads it: hashing it, at
// most limit bytes (limit <= 0: no limit; more is ErrTooLarge), and
// stopping when ctx ends. The Contents put what it wrote in place only
// when it returns no error.
//
// It reads contentBuffer bytes at a time (a reader may return little at
// a time, a multipart part 4 KiB: writing each piece as it comes would
// cost a system call per piece), and hashes and writes each block while
// it reads the next, so that an upload keeps two cores busy.
func CopyContent(ctx context.Context, w io.Writer, r io.Reader, limit int64) (Written, error) {
	h := sha256.New()
	src := io.Reader(ctxReader{ctx, r})
	if limit > 0 {
		src = io.LimitReader(src, limit+1)
	}
	cur, next := make([]byte, contentBuffer), make([]byte, contentBuffer)
	var size int64
	n, rerr := readBlock(src, cur)
	for n > 0 {
		if size += int64(n); limit > 0 && size > limit {
			return Written{}, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
		}
		written := make(chan error, 1)
		go func(b []byte) {
			h.Write(b)
			_, err := w.Write(b)
			written <- err
		}(cur[:n])
		m, merr := 0, rerr
		if rerr == nil {
			m, merr = readBlock(src, next)
		}
		if err := <-written; err != nil {
			return Written{}, err
		}
		cur, next = next, cur
		n, rerr = m, merr
	}
	if rerr != io.EOF {
		return Written{}, rerr
	}
	return Written{Size: size, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// readBlock fills b from r, or returns what it read with r's error
// (io.EOF once r has no more).
func readBlock(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// contentBuffer is how much of a content CopyContent reads, hashes and
// writes at once.
const contentBuffer = 256 << 10

// ctxReader fails its reads once ctx has ended.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
