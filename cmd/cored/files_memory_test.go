package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/internal/procstatus"
)

// fileSize is the file TestLargeFileStreams uploads and downloads.
const fileSize = 200 << 20

// TestLargeFileStreams uploads a 200 MiB file to a real cored process on
// the embedded store and downloads it again: the process's peak resident
// memory grows by less than 32 MiB over what it held before (uploads and
// downloads stream), and the content comes back whole. The times of the
// upload, the download (into io.Discard) and of cp of a file of the same
// size on the same disk are logged (docs/benchmarks.md), not asserted: the machine is
// shared.
func TestLargeFileStreams(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	p := startCoredArgs(t, "--admin-token", crashAdmin, "--data", data)
	token := newNotesInstance(t, p, map[string]any{"maxFileSize": fileSize})
	recyclePageCache(t, data, 3*fileSize)
	status := fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid)
	before, err := procstatus.KB(status, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}

	// The upload streams from a generator: the test holds no copy either.
	// Its checksum is computed before, so that the timed upload spends
	// the machine's two cores on cored, not on the test.
	generate := func(write func([]byte) error) error {
		chunk := make([]byte, 1<<20)
		for j := range chunk {
			chunk[j] = byte(j * 7)
		}
		for i := range fileSize >> 20 {
			binary.BigEndian.PutUint64(chunk, uint64(i)) // each MiB differs
			if err := write(chunk); err != nil {
				return err
			}
		}
		return nil
	}
	sum := sha256.New()
	_ = generate(func(b []byte) error { sum.Write(b); return nil })
	// The body is sent as curl -F sends a file: with its length, the
	// multipart framing around the generated content.
	var frame bytes.Buffer
	mw := multipart.NewWriter(&frame)
	if _, err := mw.CreateFormFile("0", "big.bin"); err != nil {
		t.Fatal(err)
	}
	head := frame.String()
	frame.Reset()
	_ = mw.Close()
	tail := frame.String()
	req, _ := http.NewRequest("POST", "http://"+p.addr+"/upload/", io.MultiReader(strings.NewReader(head), &generated{}, strings.NewReader(tail)))
	req.ContentLength = int64(len(head)) + fileSize + int64(len(tail))
	req.Header.Set("content-type", mw.FormDataContentType())
	req.Header.Set("core-domain", "crash.test")
	req.Header.Set("authorization", token)
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	err = json.NewDecoder(res.Body).Decode(&recs)
	res.Body.Close()
	if err != nil || res.StatusCode != 201 || len(recs) != 1 {
		t.Fatalf("upload: %d %v", res.StatusCode, err)
	}
	upload := time.Since(start)
	want := hex.EncodeToString(sum.Sum(nil))
	if recs[0]["sha256"] != want {
		t.Fatalf("the upload's checksum %v, want %s", recs[0]["sha256"], want)
	}

	// Downloaded twice: once checked against the checksum, once timed
	// (the client's own SHA-256 of 200 MiB would be most of the time).
	get := func(into io.Writer) (int64, time.Duration) {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+p.addr+recs[0]["url"].(map[string]any)["path"].(string), nil)
		req.Header.Set("authorization", token)
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		n, err := io.Copy(into, res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return n, time.Since(start)
	}
	got := sha256.New()
	if n, _ := get(got); n != fileSize || hex.EncodeToString(got.Sum(nil)) != want {
		t.Fatalf("download: %d bytes, checksum match %v", n, hex.EncodeToString(got.Sum(nil)) == want)
	}
	_, download := get(io.Discard)
	peak, err := procstatus.KB(status, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	if growth := (peak - before) << 10; growth >= 32<<20 {
		t.Errorf("cored's peak RSS grew by %d MiB (from %d MiB before the upload to %d MiB), want under 32 MiB", growth>>20, before>>10, peak>>10)
	}

	// cp of the kept content on the same disk, for comparison: alone
	// (the copy may still be in the page cache) and followed by sync of
	// the copy (durable, as an upload is: it syncs before its record).
	kept, _ := filepath.Glob(filepath.Join(data, "files", "*", "*"))
	if len(kept) != 1 {
		t.Fatalf("contents kept: %v", kept)
	}
	copyFile := filepath.Join(data, "copy.bin")
	start = time.Now()
	if out, err := exec.Command("cp", kept[0], copyFile).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	cp := time.Since(start)
	if out, err := exec.Command("sync", copyFile).CombinedOutput(); err != nil {
		t.Fatalf("sync: %v %s", err, out)
	}
	cpSync := time.Since(start)
	_ = os.Remove(copyFile)
	mibs := func(d time.Duration) float64 { return float64(fileSize>>20) / d.Seconds() }
	t.Logf("200 MiB: peak RSS growth %d MiB (%d → %d MiB); upload %v (%.0f MiB/s), download %v (%.0f MiB/s), cp %v (%.0f MiB/s), cp+sync %v (%.0f MiB/s)",
		(peak-before)>>10, before>>10, peak>>10, upload.Round(time.Millisecond), mibs(upload), download.Round(time.Millisecond), mibs(download),
		cp.Round(time.Millisecond), mibs(cp), cpSync.Round(time.Millisecond), mibs(cpSync))
}

// recyclePageCache writes n bytes to a file in dir and removes it, so
// that the writes timed after it (the upload's, cp's) go to memory the
// kernel has used and freed. In a virtual machine the first write to a
// page the guest never touched costs a fault in the host: 200 MiB of
// fresh page cache took 500 ms to write against 70–90 ms recycled, which
// made whichever of the upload and cp came first look slow.
func recyclePageCache(t *testing.T, dir string, n int) {
	f, err := os.CreateTemp(dir, "recycle-*")
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 1<<20)
	for written := 0; written < n; written += len(block) {
		if _, err := f.Write(block); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if err := os.Remove(f.Name()); err != nil {
		t.Fatal(err)
	}
}

// generated reads as the content TestLargeFileStreams's generate writes,
// copied straight into the reader's buffer (as curl reads a file): the
// client's share of the machine's two cores stays small.
type generated struct {
	chunk []byte // the MiB being read
	off   int
}

func (g *generated) Read(p []byte) (int, error) {
	if g.off >= fileSize {
		return 0, io.EOF
	}
	in := g.off & (1<<20 - 1)
	if g.chunk == nil {
		g.chunk = make([]byte, 1<<20)
		for j := range g.chunk {
			g.chunk[j] = byte(j * 7)
		}
	}
	if in == 0 {
		binary.BigEndian.PutUint64(g.chunk, uint64(g.off>>20))
	}
	n := copy(p, g.chunk[in:])
	g.off += n
	return n, nil
}
