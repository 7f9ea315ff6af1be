package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/corehq/core/internal/procstatus"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/mongo"
	"github.com/corehq/core/store/mongo/mongotest"
)

// BenchmarkExportImport exports an instance of CORE_BENCH_RECORDS records
// (default 1,000,000) from a real cored process, built as it ships, and
// imports the export into a new instance of the same process, on the
// embedded store and on the MongoDB-wire test server. It reports the
// records per second of each and how far the process's memory grew:
// anonymous memory (the heap and stacks: what the streaming bounds) at
// its peak, sampled every 20 ms, and, for the record, the peak resident
// set (VmHWM), which on the embedded store also counts the pages of the
// store file bbolt maps. It fails when anonymous memory grows by 64 MiB
// or more. The work runs once, whatever b.N.
//
//	go test ./cmd/cored -run '^$' -bench ExportImport -benchtime 1x -timeout 60m
func BenchmarkExportImport(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("CORE_BENCH_RECORDS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	bin := buildCored(b)
	kinds := []string{"bolt", "mongo"}
	if k := os.Getenv("CORE_BENCH_STORE"); k != "" {
		kinds = []string{k}
	}
	for _, kind := range kinds {
		b.Run(kind, func(b *testing.B) {
			benchTransfer(b, bin, kind, n)
		})
	}
}

func benchTransfer(b *testing.B, bin, kind string, n int) {
	const admin = "an-admin-token-of-the-transfer-benchmark"
	dir := b.TempDir()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--admin-token", admin, "--data", dir}
	var uri, db string
	if kind == "mongo" {
		uri, db = mongotest.Database(b)
		u, _ := url.Parse(uri)
		u.Path = "/" + db
		keyFile := filepath.Join(dir, "core.keys")
		var out, errs lockedBuffer
		if code := run(context.Background(), []string{"keys", "init", "--key-file", keyFile}, env(nil), &out, &errs); code != 0 {
			b.Fatalf("keys init: %s", errs.String())
		}
		args = append(args, "--mongo-uri", u.String(), "--key-file", keyFile)
	}
	start := func() *coredProcess {
		cmd := exec.Command(bin, args...)
		cmd.Env = withoutEnv(os.Environ(), "GOGC", "GOMEMLIMIT", "CORE_")
		return startProcess(b, cmd)
	}
	p := start()
	h := map[string]string{"authorization": admin}
	if st, body := p.call(b, "PUT", "/admin/v1/apps/lib/releases/v1", h, map[string]any{"schema": `type Book { title: String author: String price: Float }`}); st != 201 && st != 200 {
		b.Fatalf("release: %d %v", st, body)
	}
	st, body := p.call(b, "POST", "/admin/v1/instances", h, map[string]any{"domain": "lib.test", "app": "lib", "release": "v1"})
	if st != 201 {
		b.Fatalf("instance: %d %v", st, body)
	}
	instID, _ := body["instanceId"].(string)
	p.stop()
	seedStart := time.Now()
	if kind == "bolt" {
		seedBooks(b, filepath.Join(dir, "core.db"), instID, "owner", n)
	} else {
		seedMongo(b, uri, db, instID, n)
	}
	b.Logf("%s: %d records seeded in %v", kind, n, time.Since(seedStart).Round(time.Second))
	p = start()
	pid := p.cmd.Process.Pid
	figure := func(key string) int64 {
		kb, err := procstatus.KB(fmt.Sprintf("/proc/%d/status", pid), key)
		if err != nil {
			b.Fatal(err)
		}
		return kb << 10
	}
	measure := func(what string, work func()) {
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
			b.Fatal(err)
		}
		rss, anon := figure("VmRSS"), figure("RssAnon")
		peak := anon
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					if a := figure("RssAnon"); a > peak {
						peak = a
					}
				}
			}
		})
		begin := time.Now()
		work()
		took := time.Since(begin)
		close(done)
		wg.Wait()
		grewAnon, grewRSS := peak-anon, figure("VmHWM")-rss
		b.ReportMetric(float64(n)/took.Seconds(), what+"-records/s")
		b.ReportMetric(float64(grewAnon>>20), what+"-anon-MiB")
		b.Logf("%s %s: %d records in %v (%.0f records/s); anonymous memory %d MiB, grew %d MiB at the peak; RSS %d MiB, peak grew %d MiB",
			kind, what, n, took.Round(time.Millisecond), float64(n)/took.Seconds(), anon>>20, grewAnon>>20, rss>>20, grewRSS>>20)
		if grewAnon >= 64<<20 {
			b.Errorf("%s %s: anonymous memory grew by %d MiB, want under 64", kind, what, grewAnon>>20)
		}
	}
	export := filepath.Join(b.TempDir(), "lib.tar.gz")
	measure("export", func() {
		res := p.send(context.Background(), b, "GET", "/admin/v1/instances/lib.test/export", h, nil)
		defer res.Body.Close()
		f, err := os.Create(export)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if _, err := io.Copy(f, res.Body); err != nil || res.StatusCode != 200 {
			b.Fatalf("export: %d %v", res.StatusCode, err)
		}
	})
	fi, _ := os.Stat(export)
	b.Logf("%s: the export is %d MiB", kind, fi.Size()>>20)
	measure("import", func() {
		f, err := os.Open(export)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		req, err := http.NewRequest("POST", "http://"+p.addr+"/admin/v1/instances/copy.test/import", f)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("authorization", admin)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 201 {
			time.Sleep(time.Second) // the request's log line, with its cause, is written after the answer
			b.Fatalf("import: %d %s\nserver log: %s", res.StatusCode, out, p.log.String())
		}
	})
}

// seedMongo loads n books into an instance of a MongoDB database, 10,000
// a call.
func seedMongo(b *testing.B, uri, db, inst string, n int) {
	ctx := context.Background()
	st, err := mongo.Open(ctx, mongotest.Config(uri, db))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Truncate(time.Millisecond)
	const batch = 10_000
	for i := 0; i < n; i += batch {
		recs := make([]*store.Record, 0, batch)
		for j := i; j < i+batch && j < n; j++ {
			recs = append(recs, &store.Record{Type: "Book", ID: store.NewID(), Created: now, Updated: now, CreatedBy: "owner",
				Fields: map[string]any{"title": fmt.Sprintf("a title of its own, number %06d", j), "author": fmt.Sprintf("author %06d", j), "price": 1.5}})
		}
		if err := st.Load(ctx, inst, recs); err != nil {
			b.Fatalf("loading books %d to %d: %v", i, i+len(recs), err)
		}
	}
}
