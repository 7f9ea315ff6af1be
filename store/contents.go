package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
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
// cost a system call per piece) and runs as a pipeline of three stages,
// each on its own goroutine: while block i+2 is read, block i+1 is hashed
// and block i written. SHA-256 is the slowest stage (about 1.7 GB/s with
// the CPU's SHA instructions), so an upload costs what hashing it costs,
// not the sum of reading, hashing and writing. contentBlocks buffers
// circulate: an upload holds contentBlocks × contentBuffer bytes whatever
// its size.
func CopyContent(ctx context.Context, w io.Writer, r io.Reader, limit int64) (Written, error) {
	src := io.Reader(ctxReader{ctx, r})
	if limit > 0 {
		src = io.LimitReader(src, limit+1)
	}
	free := make(chan []byte, contentBlocks)
	for range contentBlocks {
		free <- make([]byte, contentBuffer)
	}
	toHash, toWrite := make(chan []byte, contentBlocks), make(chan []byte, contentBlocks)
	h := sha256.New()
	go func() {
		for b := range toHash {
			h.Write(b)
			toWrite <- b
		}
		close(toWrite)
	}()
	// The writer keeps taking blocks after a failure (without writing
	// them), so that neither stage before it ever waits on it for good.
	var werr atomic.Pointer[error]
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for b := range toWrite {
			if werr.Load() == nil {
				if _, err := w.Write(b); err != nil {
					werr.Store(&err)
				}
			}
			free <- b[:cap(b)]
		}
	}()
	var size int64
	err := func() error {
		defer close(toHash)
		for {
			if p := werr.Load(); p != nil {
				return *p
			}
			b := <-free
			n, err := readBlock(src, b)
			if size += int64(n); limit > 0 && size > limit {
				return fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
			}
			if n > 0 {
				toHash <- b[:n]
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}()
	<-wrote
	if err == nil && werr.Load() != nil {
		err = *werr.Load()
	}
	if err != nil {
		return Written{}, err
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
// writes at once, and contentBlocks how many such blocks one copy holds
// (one per stage).
const (
	contentBuffer = 512 << 10
	contentBlocks = 3
)

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
