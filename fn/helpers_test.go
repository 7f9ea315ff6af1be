package fn

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt/bolttest"
)

// env is a runtime over a real bolt store in a temporary directory.
type env struct {
	t    testing.TB
	st   store.Store
	pk   *Packages
	logs *Log
	js   *JS
}

const testApp = "shop"

func newEnv(t testing.TB, change func(*Config)) *env {
	t.Helper()
	st := bolttest.Open(t)
	jcfg := DefaultConfig()
	if change != nil {
		change(&jcfg)
	}
	pk := NewPackages(st, DefaultPackagesConfig())
	logs := NewLog(st, DefaultLogConfig())
	t.Cleanup(func() {
		if err := logs.Close(); err != nil {
			t.Errorf("closing the log: %v", err)
		}
	})
	js, err := NewJS(jcfg, pk, logs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { js.Close() })
	return &env{t: t, st: st, pk: pk, logs: logs, js: js}
}

// inline runs calls in the test's process (Config.Processes off): for
// tests that look inside the runtime.
func inline(c *Config) { c.Processes = false }

// publish publishes a single-file function.
func (e *env) publish(name, version, src string) {
	e.t.Helper()
	e.publishBytes(name, version, []byte(src))
}

func (e *env) publishBytes(name, version string, body []byte) {
	e.t.Helper()
	if _, _, err := e.pk.Publish(context.Background(), testApp, name, version, body); err != nil {
		e.t.Fatalf("publishing %s %s: %v", name, version, err)
	}
}

// publishFiles publishes a package of files as a .tar.gz.
func (e *env) publishFiles(name, version string, files map[string]string) {
	e.t.Helper()
	e.publishBytes(name, version, tarGz(e.t, files, nil))
}

// invoke calls a function of testApp as the instance "inst1".
func (e *env) invoke(inv Invocation) (Result, error) {
	inv.App = testApp
	if inv.Caller.InstanceID == "" {
		inv.Caller.InstanceID = "inst1"
	}
	return e.js.Invoke(context.Background(), inv)
}

// logLines returns an instance's log messages by level.
func (e *env) logLines(inst string) []LogEntry {
	e.t.Helper()
	es, err := e.logs.Read(context.Background(), inst, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return es
}

// testdataFiles reads a package directory of testdata/functions.
func testdataFiles(t testing.TB, name string) map[string]string {
	t.Helper()
	root := filepath.Join("..", "testdata", "functions", name)
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// tarEntry is an extra raw entry for tarGz (links, odd names).
type tarEntry struct {
	hdr  tar.Header
	data string
}

func tarGz(t testing.TB, files map[string]string, extra []tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	var entries []tarEntry
	for _, name := range sortedKeys(files) {
		entries = append(entries, tarEntry{tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}, files[name]})
	}
	for _, x := range append(entries, extra...) {
		h := x.hdr
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(x.data))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if x.data != "" {
			if _, err := tw.Write([]byte(x.data)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zipEntry is an extra raw entry for zipOf.
type zipEntry struct {
	hdr  zip.FileHeader
	data string
}

func zipOf(t testing.TB, files map[string]string, extra []zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var entries []zipEntry
	for _, name := range sortedKeys(files) {
		entries = append(entries, zipEntry{zip.FileHeader{Name: name, Method: zip.Deflate}, files[name]})
	}
	for _, x := range append(entries, extra...) {
		h := x.hdr
		w, err := zw.CreateHeader(&h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(x.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// errorIs fails unless err matches want (nil: no error).
func errorIs(t testing.TB, err, want error) {
	t.Helper()
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		t.Fatalf("error = %v (%T), want %v", err, err, want)
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
