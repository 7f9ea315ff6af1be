package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/store"
)

// RunContents runs the suite of store.Contents on the contents of the
// stores open returns (each test opens its own).
func RunContents(t *testing.T, open func(t *testing.T) store.Store) {
	contents := func(t *testing.T) store.Contents {
		h, ok := open(t).(store.ContentsHolder)
		if !ok {
			t.Fatal("storetest: the store keeps no contents (store.ContentsHolder)")
		}
		return h.Contents()
	}
	ctx := context.Background()
	t.Run("PutOpenSeek", func(t *testing.T) {
		c := contents(t)
		data := bytes.Repeat([]byte("0123456789abcdef"), 40_000) // 640 000 bytes: several GridFS chunks
		w, err := c.Put(ctx, "ci1", "F1", bytes.NewReader(data), 0)
		if err != nil {
			t.Fatalf("Put: %v", err)
		}
		sum := sha256.Sum256(data)
		if w.Size != int64(len(data)) || w.SHA256 != hex.EncodeToString(sum[:]) {
			t.Fatalf("Put wrote %+v, want size %d and the data's SHA-256", w, len(data))
		}
		r, err := c.Open(ctx, "ci1", "F1")
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer r.Close()
		if r.Size() != int64(len(data)) {
			t.Errorf("Size = %d, want %d", r.Size(), len(data))
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("reading the content: %v (equal: %v)", err, bytes.Equal(got, data))
		}
		// Backward and forward, across chunk boundaries, as a Range does.
		for _, at := range []int64{300_001, 5, 600_000, 0, int64(len(data)) - 3} {
			if _, err := r.Seek(at, io.SeekStart); err != nil {
				t.Fatalf("Seek(%d): %v", at, err)
			}
			buf := make([]byte, 3)
			if _, err := io.ReadFull(r, buf); err != nil || !bytes.Equal(buf, data[at:at+3]) {
				t.Fatalf("3 bytes at %d = %q, %v; want %q", at, buf, err, data[at:at+3])
			}
		}
		if end, err := r.Seek(0, io.SeekEnd); err != nil || end != int64(len(data)) {
			t.Errorf("Seek to the end = %d, %v", end, err)
		}
	})
	t.Run("MissingAndTooLarge", func(t *testing.T) {
		c := contents(t)
		if _, err := c.Open(ctx, "ci2", "NOPE"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Open of a missing content: %v, want ErrNotFound", err)
		}
		if _, err := c.Open(ctx, "ci2", "../../etc"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Open of a path: %v, want ErrNotFound", err)
		}
		if _, err := c.Put(ctx, "ci2", "../x", strings.NewReader("x"), 0); err == nil {
			t.Error("Put of a path name succeeded")
		}
		_, err := c.Put(ctx, "ci2", "BIG", bytes.NewReader(make([]byte, 1001)), 1000)
		if !errors.Is(err, store.ErrTooLarge) {
			t.Fatalf("Put past the limit: %v, want ErrTooLarge", err)
		}
		if _, err := c.Open(ctx, "ci2", "BIG"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a content past the limit was kept: %v", err)
		}
		if _, err := c.Put(ctx, "ci2", "FIT", bytes.NewReader(make([]byte, 1000)), 1000); err != nil {
			t.Errorf("Put of exactly the limit: %v", err)
		}
		if err := c.Delete(ctx, "ci2", "FIT"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Open(ctx, "ci2", "FIT"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Open after Delete: %v", err)
		}
		if err := c.Delete(ctx, "ci2", "FIT"); err != nil {
			t.Errorf("deleting a missing content: %v", err)
		}
	})
	t.Run("SweepAndDrop", func(t *testing.T) {
		c := contents(t)
		for _, id := range []string{"KEEP", "ORPHAN"} {
			if _, err := c.Put(ctx, "ci3", id, strings.NewReader(id), 0); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Put(ctx, "ci4", "OTHER", strings.NewReader("other"), 0); err != nil {
			t.Fatal(err)
		}
		has := func(_ context.Context, inst, id string) (bool, error) { return id == "KEEP" || inst == "ci4", nil }
		// Nothing written after before is judged: an upload in flight
		// has no record yet.
		if n, err := c.Sweep(ctx, time.Now().Add(-time.Hour), has); err != nil || n != 0 {
			t.Fatalf("Sweep of older contents = %d, %v; want 0", n, err)
		}
		if n, err := c.Sweep(ctx, time.Now().Add(time.Minute), has); err != nil || n != 1 {
			t.Fatalf("Sweep = %d, %v; want 1 (ORPHAN)", n, err)
		}
		if _, err := c.Open(ctx, "ci3", "ORPHAN"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the orphan is still there: %v", err)
		}
		if r, err := c.Open(ctx, "ci3", "KEEP"); err != nil {
			t.Errorf("the kept content is gone: %v", err)
		} else {
			r.Close()
		}
		if err := c.DropInstance(ctx, "ci3"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Open(ctx, "ci3", "KEEP"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a content of a dropped instance is there: %v", err)
		}
		if r, err := c.Open(ctx, "ci4", "OTHER"); err != nil {
			t.Errorf("dropping ci3 removed ci4's content: %v", err)
		} else {
			r.Close()
		}
	})
}
