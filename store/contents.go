package store

import (
	"bufio"
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
func CopyContent(ctx context.Context, w io.Writer, r io.Reader, limit int64) (Written, error) {
	h := sha256.New()
	src := io.Reader(ctxReader{ctx, r})
	if limit > 0 {
		src = io.LimitReader(src, limit+1)
	}
	// A reader may return little at a time (a multipart part: 4 KiB):
	// writing each piece as it comes would cost a system call per piece.
	bw := bufio.NewWriterSize(w, contentWriteBuffer)
	n, err := io.Copy(io.MultiWriter(bw, h), src)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return Written{}, err
	}
	if limit > 0 && n > limit {
		return Written{}, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	return Written{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// contentWriteBuffer is how much of a content CopyContent writes at once.
const contentWriteBuffer = 256 << 10

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
