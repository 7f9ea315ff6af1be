package backup_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/backup"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt/bolttest"
)

// filled is a store with an instance's records (a float that looks like
// an integer among them) and a document.
func filled(t *testing.T) store.Store {
	t.Helper()
	st := bolttest.Open(t)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, err := st.Write(ctx, "i1", []store.Op{
		{Kind: store.OpUpsert, Type: "Book", ID: "b1", Now: now, Set: map[string]any{"price": 3.0, "n": int64(3), "tags": []any{"a"}}},
		{Kind: store.OpUpsert, Type: "Book", ID: "b2", Now: now, Set: map[string]any{"meta": map[string]any{"x": 1.5}}},
		{Kind: store.OpTrash, Type: "Book", ID: "b2", Now: now},
	}, store.Quota{}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutDoc(ctx, "release", "app/v1", []byte{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	// A File record and its content, larger than an NDJSON entry (a
	// content is streamed, not held whole).
	if _, err := st.Write(ctx, "i1", []store.Op{{Kind: store.OpUpsert, Type: "File", ID: "f1", Now: now, Set: map[string]any{"name": "big.bin"}}}, store.Quota{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Contents().Put(ctx, "i1", "f1", bytes.NewReader(bigContent()), 0); err != nil {
		t.Fatal(err)
	}
	return st
}

// bigContent is the content of the File record of filled.
func bigContent() []byte {
	b := make([]byte, 3<<20+17)
	for i := range b {
		b[i] = byte(i / 1000)
	}
	return b
}

func noDeclare(context.Context) error { return nil }

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := filled(t)
	var buf bytes.Buffer
	if _, err := backup.Take(ctx, src, &buf); err != nil {
		t.Fatal(err)
	}
	dst := bolttest.Open(t)
	if _, err := backup.Restore(ctx, dst, bytes.NewReader(buf.Bytes()), noDeclare); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"b1", "b2"} {
		want, _ := src.Get(ctx, "i1", "Book", id)
		got, err := dst.Get(ctx, "i1", "Book", id)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s restored (-want +got):\n%s", id, d)
		}
	}
	if _, ok := mustGet(t, dst, "b1").Fields["price"].(float64); !ok {
		t.Error("a float holding a whole number came back as another kind")
	}
	c, err := dst.Contents().Open(ctx, "i1", "f1")
	if err != nil {
		t.Fatalf("the File's content after the restore: %v", err)
	}
	got, err := io.ReadAll(c)
	c.Close()
	if err != nil || !bytes.Equal(got, bigContent()) {
		t.Errorf("the File's content after the restore: %d bytes (%v), want the %d put", len(got), err, len(bigContent()))
	}
	if doc, err := dst.GetDoc(ctx, "release", "app/v1"); err != nil || !bytes.Equal(doc, []byte{0, 1, 2}) {
		t.Errorf("document = %v, %v", doc, err)
	}
	_, err = backup.Restore(ctx, dst, bytes.NewReader(buf.Bytes()), noDeclare)
	if !errors.Is(err, backup.ErrNotEmpty) {
		t.Errorf("a restore into a store holding data: %v, want ErrNotEmpty", err)
	}
}

func mustGet(t *testing.T, st store.Store, id string) *store.Record {
	t.Helper()
	r, err := st.Get(context.Background(), "i1", "Book", id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCorruptArchives: a changed byte, a cut archive, another format, all
// refused by Verify with a message saying what is wrong.
func TestCorruptArchives(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if _, err := backup.Take(context.Background(), filled(t), &buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	if _, err := backup.Verify(bytes.NewReader(good), backup.FormatBackup); err != nil {
		t.Fatalf("Verify of a good archive: %v", err)
	}
	for _, tc := range []struct {
		name, want string
		data       []byte
		format     string
	}{
		{"cut short", "corrupt", good[:len(good)*2/3], backup.FormatBackup},
		{"not gzip", "not gzip", []byte("hello"), backup.FormatBackup},
		{"another format", `format "core-backup"`, good, "core-export"},
		{"entry changed", "checksum", changedEntry(t, good, "records/", `"b1"`, `"b9"`), backup.FormatBackup},
		{"content changed", "checksum", changedEntry(t, good, "files/", "\x00\x00\x00", "\x00\x01\x00"), backup.FormatBackup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := backup.Verify(bytes.NewReader(tc.data), tc.format)
			if !errors.Is(err, backup.ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Verify = %v; want ErrCorrupt saying %q", err, tc.want)
			}
		})
	}
}

// changedEntry rewrites an archive with from replaced by to once in the
// entries whose name holds in, the original SHA256SUMS kept.
func changedEntry(t *testing.T, good []byte, in, from, to string) []byte {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out bytes.Buffer
	gw := gzip.NewWriter(&out)
	tw := tar.NewWriter(gw)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(hdr.Name, in) {
			if !bytes.Contains(data, []byte(from)) {
				t.Fatalf("entry %s does not hold %q", hdr.Name, from)
			}
			data = bytes.Replace(data, []byte(from), []byte(to), 1)
		}
		hdr.Size = int64(len(data))
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
