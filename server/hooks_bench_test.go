package server_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/corehq/core/internal/hooktest"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// BenchmarkEventHookDelay writes 500 records a second for 10 seconds
// through the real server (eight writers, each paced), with one hook
// posting every change to a real receiver on loopback, and reports the
// delay from each change's commit to its arrival: p50, p99 and the
// largest, in milliseconds, and whether delivery kept up (every change
// arrived). The hook is delivering when the timed writes begin. It runs once whatever b.N is (-benchtime=1x).
//
//	go test ./server -run '^$' -bench EventHookDelay -benchtime=1x
func BenchmarkEventHookDelay(b *testing.B) {
	env := servertest.Start(b)
	env.PutRelease("notes", "v1", "type Note { text: String }")
	token := env.CreateInstance("bench.test", "notes", "v1", tenant.Settings{})
	rcv := hooktest.Start(b)
	st, body := env.GraphQL("bench.test", token, hookUpsert, map[string]any{"v": map[string]any{"EventHook": map[string]any{"url": rcv.URL, "secret": rcv.Secret}}})
	if st != http.StatusOK || body["errors"] != nil {
		b.Fatalf("hook: %d %v", st, body)
	}
	// A new hook is found by the next scan of the instances (within a
	// second): one change delivered first makes the timed writes those of
	// a hook already delivering.
	if st, body := env.GraphQL("bench.test", token, hookUpsert, map[string]any{"v": map[string]any{"Note": map[string]any{"text": "first"}}}); st != http.StatusOK || body["errors"] != nil {
		b.Fatalf("upsert: %d %v", st, body)
	}
	rcv.WaitFor(b, "the first change", func(r *hooktest.Receiver) bool { return len(r.Events()) >= 1 })
	const rate, seconds, writers = 500, 10, 8
	total := rate * seconds
	b.ResetTimer()
	var wg sync.WaitGroup
	start := time.Now()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			every := time.Second * writers / rate
			for i := 0; i < total/writers; i++ {
				if d := time.Until(start.Add(time.Duration(i)*every + time.Duration(w)*every/writers)); d > 0 {
					time.Sleep(d) // pacing the writers at the rate
				}
				st, body := env.GraphQL("bench.test", token, hookUpsert, map[string]any{"v": map[string]any{"Note": map[string]any{"text": "x"}}})
				if st != http.StatusOK || body["errors"] != nil {
					b.Errorf("upsert: %d %v", st, body)
					return
				}
			}
		}()
	}
	wg.Wait()
	wrote := time.Since(start)
	rcv.WaitFor(b, "every change", func(r *hooktest.Receiver) bool { return len(r.Events()) >= total+1 })
	b.StopTimer()
	var delays []float64
	for _, e := range rcv.Events()[1:] {
		at, err := time.Parse(time.RFC3339Nano, e.Timestamp)
		if err != nil {
			b.Fatal(err)
		}
		delays = append(delays, float64(e.Arrived.Sub(at).Microseconds())/1000)
	}
	slices.Sort(delays)
	b.ReportMetric(float64(total)/wrote.Seconds(), "writes/s")
	b.ReportMetric(delays[len(delays)/2], "p50-ms")
	b.ReportMetric(delays[len(delays)*99/100], "p99-ms")
	b.ReportMetric(delays[len(delays)-1], "max-ms")
}
