package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// failingWriter fails its writes from the nth on.
type failingWriter struct {
	n   int
	buf bytes.Buffer
}

var errDisk = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n--; w.n < 0 {
		return 0, errDisk
	}
	return w.buf.Write(p)
}

// TestCopyContent: the pipeline of CopyContent writes and hashes every
// byte in order, whatever size the reader's pieces, and every failure
// (past the limit, the writer's, the reader's, the context's) ends it
// with that failure instead of a hang.
func TestCopyContent(t *testing.T) {
	content := make([]byte, 5*contentBuffer+12345) // blocks, then part of one
	for i := range content {
		content[i] = byte(i * 31 / 7)
	}
	sum := sha256.Sum256(content)
	want := hex.EncodeToString(sum[:])

	for name, r := range map[string]func() io.Reader{
		"whole": func() io.Reader { return bytes.NewReader(content) },
		"piece by piece": func() io.Reader {
			return iotest.OneByteReader(io.LimitReader(bytes.NewReader(content), contentBuffer+3))
		},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			src := r()
			wantLen := len(content)
			wantSum := want
			if name != "whole" {
				wantLen = contentBuffer + 3
				s := sha256.Sum256(content[:wantLen])
				wantSum = hex.EncodeToString(s[:])
			}
			w, err := CopyContent(context.Background(), &out, src, int64(wantLen))
			if err != nil || w.Size != int64(wantLen) || w.SHA256 != wantSum || !bytes.Equal(out.Bytes(), content[:wantLen]) {
				t.Fatalf("CopyContent: %+v %v, %d bytes written, want %d bytes of %s", w, err, out.Len(), wantLen, wantSum)
			}
		})
	}

	t.Run("limit", func(t *testing.T) {
		_, err := CopyContent(context.Background(), io.Discard, bytes.NewReader(content), int64(len(content)-1))
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("a content one byte past the limit: %v, want ErrTooLarge", err)
		}
	})
	t.Run("writer fails", func(t *testing.T) {
		_, err := CopyContent(context.Background(), &failingWriter{n: 2}, bytes.NewReader(content), 0)
		if !errors.Is(err, errDisk) {
			t.Fatalf("a write that fails: %v, want %v", err, errDisk)
		}
	})
	t.Run("reader fails", func(t *testing.T) {
		broken := io.MultiReader(bytes.NewReader(content[:3*contentBuffer/2]), iotest.ErrReader(io.ErrUnexpectedEOF))
		_, err := CopyContent(context.Background(), io.Discard, broken, 0)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("a read that fails: %v, want %v", err, io.ErrUnexpectedEOF)
		}
	})
	t.Run("context ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := CopyContent(ctx, io.Discard, bytes.NewReader(content), 0)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a copy whose context ended: %v, want context.Canceled", err)
		}
	})
}
