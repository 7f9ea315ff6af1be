package fn

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/corehq/core/errcode"
)

func TestPackages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	pk := e.pk

	info, res, err := pk.Publish(ctx, testApp, "echo", "v1", []byte(testdataFiles(t, "echo")["index.js"]))
	if err != nil || res != Created {
		t.Fatalf("first publish: %v, %v", res, err)
	}
	if info.Main != "index.js" || info.Format != FormatJS || len(info.SHA256) != 64 || info.Size == 0 {
		t.Errorf("info = %+v", info)
	}
	again, res, err := pk.Publish(ctx, testApp, "echo", "v1", zipOf(t, testdataFiles(t, "echo"), nil))
	if err != nil || res != Unchanged || again.SHA256 != info.SHA256 {
		t.Errorf("same files as a zip: %v, %v (sha %s, was %s)", res, err, again.SHA256, info.SHA256)
	}
	if _, res, err = pk.Publish(ctx, testApp, "echo", "v1", []byte(`exports.main = (i, cb) => cb('v1 again', null);`)); err != nil || res != Replaced {
		t.Errorf("other content: %v, %v", res, err)
	}
	if _, _, err := pk.Publish(ctx, testApp, "echo", "v2", []byte(`exports.main = (i, cb) => cb('v2', null);`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pk.Publish(ctx, testApp, "aaa", "1.0.0", []byte(`exports.main = (i, cb) => cb(1, null);`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pk.Publish(ctx, "other-app", "echo", "v1", []byte(`exports.main = (i, cb) => cb(1, null);`)); err != nil {
		t.Fatal(err)
	}

	list, err := pk.List(ctx, testApp)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range list {
		names = append(names, i.Name+"@"+i.Version)
	}
	if d := cmp.Diff([]string{"aaa@1.0.0", "echo@v1", "echo@v2"}, names); d != "" {
		t.Errorf("List (-want +got):\n%s", d)
	}

	res2, err := e.invoke(Invocation{Name: "echo", Version: "v1"})
	if err != nil || res2.Value != "v1 again" {
		t.Errorf("the replaced version answers %v, %v", res2.Value, err)
	}

	got, err := pk.Delete(ctx, testApp, "echo", "v1")
	if err != nil || got.Version != "v1" {
		t.Fatalf("Delete: %+v, %v", got, err)
	}
	if _, err := pk.Delete(ctx, testApp, "echo", "v1"); !errors.Is(err, ErrNotPublished) {
		t.Errorf("deleting again: %v", err)
	}
	if _, err := pk.Info(ctx, testApp, "echo", "v1"); !errors.Is(err, ErrNotPublished) {
		t.Errorf("Info after Delete: %v", err)
	}
	if _, err := e.invoke(Invocation{Name: "echo", Version: "v1"}); !errors.Is(err, ErrNotPublished) {
		t.Errorf("calling a deleted version: %v", err)
	}
	if res2, err := e.invoke(Invocation{Name: "echo", Version: "v2"}); err != nil || res2.Value != "v2" {
		t.Errorf("the other version: %v, %v", res2.Value, err)
	}
	// No chunk of a deleted or replaced version stays behind.
	chunks, err := e.st.ListDocs(ctx, docChunk)
	if err != nil {
		t.Fatal(err)
	}
	for key := range chunks {
		if strings.HasPrefix(key, testApp+"/echo/v1/") {
			t.Errorf("chunk %s left behind", key)
		}
	}
}

func TestPublishErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		app, name, version, body string
		code                     errcode.Code
		msg                      string
	}{
		{testApp, "bad/name", "v1", "1", errcode.BadRequest, `function name "bad/name"`},
		{testApp, "ok", "", "1", errcode.BadRequest, `version ""`},
		{testApp, "ok", "-v", "1", errcode.BadRequest, `version "-v"`},
		{"", "ok", "v1", "1", errcode.BadRequest, `app ""`},
		{testApp, "ok", "v1", "exports.main = (", errcode.BadRequest, "function ok version v1: index.js does not compile"},
		{testApp, "ok", "v1", strings.Repeat("/", 9<<20), errcode.TooLarge, "function ok version v1: the upload is larger than 8388608 bytes"},
	} {
		_, _, err := e.pk.Publish(ctx, tc.app, tc.name, tc.version, []byte(tc.body))
		ce := errcode.As(err)
		if ce.Code != tc.code || !strings.Contains(ce.Message, tc.msg) {
			t.Errorf("Publish(%q, %q, %q) = %s %q; want %s containing %q", tc.app, tc.name, tc.version, ce.Code, ce.Message, tc.code, tc.msg)
		}
	}
}

// TestPackagesAcrossProcesses: two Packages over one store, as two
// processes sharing a database: a change made through one is served by
// the other once its cache revalidates.
func TestPackagesAcrossProcesses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	cfg := DefaultPackagesConfig()
	cfg.Revalidate = 50 * time.Millisecond
	other := NewPackages(e.st, cfg)

	if _, err := other.Load(ctx, testApp, "f", "v1"); !errors.Is(err, ErrNotPublished) {
		t.Fatalf("before publishing: %v", err)
	}
	e.publish("f", "v1", `exports.main = (i, cb) => cb('first', null);`)
	waitFor(t, func() bool {
		p, err := other.Load(ctx, testApp, "f", "v1")
		return err == nil && strings.Contains(string(p.files["index.js"]), "first")
	})
	p1, _ := other.Load(ctx, testApp, "f", "v1")
	e.publish("f", "v1", `exports.main = (i, cb) => cb('second', null);`)
	waitFor(t, func() bool {
		p, err := other.Load(ctx, testApp, "f", "v1")
		return err == nil && p != p1 && strings.Contains(string(p.files["index.js"]), "second")
	})
	if _, err := e.pk.Delete(ctx, testApp, "f", "v1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		_, err := other.Load(ctx, testApp, "f", "v1")
		return errors.Is(err, ErrNotPublished)
	})
}

// TestLargePackage: a package over one chunk round-trips through the
// store.
func TestLargePackage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	big := "module.exports = '" + strings.Repeat("x", chunkSize*2+123) + "';"
	e.publishFiles("big", "v1", map[string]string{
		"index.js": `exports.main = (i, cb) => cb(require('./data').length, null);`,
		"data.js":  big,
	})
	fresh := NewPackages(e.st, DefaultPackagesConfig()) // nothing cached
	p, err := fresh.Load(context.Background(), testApp, "big", "v1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(big, string(p.files["data.js"])); d != "" {
		t.Errorf("data.js differs after the round trip")
	}
	chunks, _ := e.st.ListDocs(context.Background(), docChunk)
	if len(chunks) < 3 {
		t.Errorf("%d chunks, want 3 or more", len(chunks))
	}
	res, err := e.invoke(Invocation{Name: "big", Version: "v1"})
	if err != nil || res.Value != float64(chunkSize*2+123) {
		t.Errorf("answer %v, %v; function log: %+v", res.Value, err, e.logLines("inst1"))
	}
}

func TestCacheBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	cfg := DefaultPackagesConfig()
	cfg.CacheBytes = 1000
	pk := NewPackages(e.st, cfg)
	ctx := context.Background()
	for _, v := range []string{"v1", "v2", "v3", "v4"} {
		if _, _, err := pk.Publish(ctx, testApp, "f", v, []byte("exports.main = () => '"+strings.Repeat("y", 400)+"';")); err != nil {
			t.Fatal(err)
		}
	}
	pk.cmu.Lock()
	defer pk.cmu.Unlock()
	if pk.bytes > cfg.CacheBytes || len(pk.cache) != pk.lru.Len() {
		t.Errorf("cache holds %d bytes in %d entries (lru %d), bound %d", pk.bytes, len(pk.cache), pk.lru.Len(), cfg.CacheBytes)
	}
	if d := cmp.Diff([]string{"shop/f/v3", "shop/f/v4"}, keysOf(pk.cache), cmpopts.SortSlices(func(a, b string) bool { return a < b })); d != "" {
		t.Errorf("cached (-want +got):\n%s", d)
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// waitFor polls cond until it holds (or fails the test after 30 s).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // generous: a loaded machine may be slow; progress is what counts
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
