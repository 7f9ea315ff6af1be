package gql_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corehq/core/gql"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// BenchmarkSubscriptionDelivery: benchSubscribers subscriptions of one
// instance (on the engine, without a transport) and b.N writes of one
// book each, at most one per millisecond (1,000 writes/s) through
// /graphql, each waiting for the last; every subscription receives every
// write. In "one-document" every subscription runs the same document as
// the same caller, so they share each event's execution (feed.go); in
// "distinct-documents" each has its own filter (matching every book), so
// each executes every event itself. It reports the write rate reached,
// the delivery latency (from before the write to the event in the
// subscriber's hands) at p50 and p99, the CPU time of the whole process
// per delivered event, and the memory each open subscription holds (heap
// and goroutine stacks).
//
//	go test ./gql -run '^$' -bench SubscriptionDelivery -benchtime 1000x
func BenchmarkSubscriptionDelivery(b *testing.B) {
	b.Run("one-document", func(b *testing.B) { benchmarkDelivery(b, false) })
	b.Run("distinct-documents", func(b *testing.B) { benchmarkDelivery(b, true) })
}

func benchmarkDelivery(b *testing.B, distinct bool) {
	const benchSubscribers = 1000
	env := servertest.Start(b)
	env.PutRelease("bookstore", "v1", bookstoreSDL(b))
	token := env.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{})
	c := &client{t: b, env: env, domain: "books.test", token: token}
	inst, err := env.Directory.Resolve([]string{"books.test"})
	if err != nil {
		b.Fatal(err)
	}
	genv, err := env.Engine.Open(context.Background(), inst, token, "127.0.0.1")
	if err != nil {
		b.Fatal(err)
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	streams := make([]*gql.Stream, benchSubscribers)
	for i := range streams {
		req := gql.Request{Query: `subscription($q: String) { subscribe(type: Book, arcql: $q) { op id node { ... on Book { title } } } }`}
		if distinct {
			req.Variables = map[string]any{"q": fmt.Sprintf(`title != "not %d"`, i)}
		}
		st, res := env.Engine.Subscribe(context.Background(), genv, req, "")
		if res != nil {
			b.Fatalf("subscribe: %+v", res.Errors)
		}
		streams[i] = st
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perSubscription := (float64(after.HeapAlloc) - float64(before.HeapAlloc) + float64(after.StackInuse) - float64(before.StackInuse)) / benchSubscribers
	defer func() {
		for _, st := range streams {
			st.Close()
		}
	}()

	sent := make([]atomic.Int64, b.N) // UnixNano before write i
	latencies := make([][]time.Duration, benchSubscribers)
	var wg sync.WaitGroup
	for i, st := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < b.N; n++ {
				ev, ok := <-st.Events()
				if !ok {
					b.Errorf("subscription %d ended after %d events: %v", i, n, st.Err())
					return
				}
				id := path(ev.Result.Data, "subscribe", "id").(string)
				k, _ := strconv.Atoi(strings.TrimPrefix(id, "w"))
				latencies[i] = append(latencies[i], time.Since(time.Unix(0, sent[k].Load())))
			}
		}()
	}
	b.ResetTimer()
	cpu := gql.CPUTime()
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for k := 0; k < b.N; k++ {
		<-tick.C
		sent[k].Store(time.Now().UnixNano())
		c.data(grantDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": fmt.Sprintf("w%06d", k)}, "title": "t"}}})
	}
	writing := time.Since(start)
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/writing.Seconds(), "writes/s")
	b.ReportMetric(float64(gql.CPUTime()-cpu)/float64(b.N*benchSubscribers)/1e3, "cpu-µs/delivery")
	all := slices.Concat(latencies...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	at := func(q float64) float64 { return float64(all[int(q*float64(len(all)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(perSubscription, "B/subscription")
	b.ReportMetric(0, "ns/op")
}
