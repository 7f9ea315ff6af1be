package docfs_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"testing"

	storagedriver "github.com/distribution/distribution/v3/registry/storage/driver"
	"github.com/distribution/distribution/v3/registry/storage/driver/testsuites"

	"github.com/corehq/core/oci/docfs"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt/bolttest"
)

// TestDriverSuite runs distribution's conformance suite for storage
// drivers on the driver over the embedded store. The suite is run in its
// short mode: the long mode only adds a 5 GiB stream (and more
// concurrent ones), which would make this package's tests take minutes
// and gigabytes of disk for what TestContinueStreamAppendLarge and
// TestChunkedContent already cover. (Its TestStatCall sleeps 15 s.)
func TestDriverSuite(t *testing.T) {
	if !testing.Short() {
		if err := flag.Set("test.short", "true"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = flag.Set("test.short", "false") })
	}
	st := bolttest.Open(t)
	testsuites.Driver(t, func() (storagedriver.StorageDriver, error) { return docfs.New(st), nil }, false)
}

// countingStore counts the documents a driver writes and the largest one,
// to show that content is chunked.
type countingStore struct {
	store.Store
	puts    int
	largest int
}

func (c *countingStore) PutDoc(ctx context.Context, kind, key string, doc []byte) error {
	c.puts++
	c.largest = max(c.largest, len(doc))
	return c.Store.PutDoc(ctx, kind, key, doc)
}

// TestChunkedContent writes content of several chunks through a writer
// closed and continued twice (as an upload in three PATCH requests), and
// checks that no document holds more than a chunk, that the content
// reads back whole and from an offset, and that a move keeps it.
func TestChunkedContent(t *testing.T) {
	ctx := context.Background()
	cs := &countingStore{Store: bolttest.Open(t)}
	d := docfs.New(cs)
	want := make([]byte, 3*docfs.ChunkSize+12345)
	for i := range want {
		want[i] = byte(i * 7 / 5)
	}
	parts := [][]byte{want[:docfs.ChunkSize/2], want[docfs.ChunkSize/2 : 2*docfs.ChunkSize+1], want[2*docfs.ChunkSize+1:]}
	for i, part := range parts {
		w, err := d.Writer(ctx, "/uploads/u1/data", i > 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(w, bytes.NewReader(part)); err != nil {
			t.Fatal(err)
		}
		if i == len(parts)-1 {
			err = w.Commit(ctx)
		} else {
			err = w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if cs.largest > docfs.ChunkSize+1024 {
		t.Errorf("a document of %d bytes was written; chunks are %d", cs.largest, docfs.ChunkSize)
	}
	if err := d.Move(ctx, "/uploads/u1/data", "/blobs/b1/data"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Stat(ctx, "/uploads/u1/data"); err == nil {
		t.Error("the moved file is still at its old path")
	}
	got, err := d.GetContent(ctx, "/blobs/b1/data")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes that differ from the %d written", len(got), len(want))
	}
	off := int64(2*docfs.ChunkSize - 3)
	r, err := d.Reader(ctx, "/blobs/b1/data", off)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tail, want[off:]) {
		t.Fatalf("reading from offset %d: got %d bytes that differ from the %d expected", off, len(tail), len(want)-int(off))
	}
	if err := d.Delete(ctx, "/blobs"); err != nil {
		t.Fatal(err)
	}
	docs, err := cs.ListDocs(ctx, "imgfs-data")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 0 {
		t.Errorf("%d content chunks are left after deleting every file", len(docs))
	}
}
