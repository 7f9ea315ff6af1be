package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// loadResult is what one scenario's load produced.
type loadResult struct {
	requests int // answered (any status)
	non2xx   int
	errors   int // no answer: connection or protocol errors, time-outs
	// firstBad describes the first non-2xx answer or error.
	firstBad string
	wall     time.Duration
	hist     *histogram
}

// loadSpec says how to drive one request.
type loadSpec struct {
	addr    string // host:port to dial
	req     *request
	n       int // requests in all
	conc    int // connections, each with one request in flight
	timeout time.Duration
	seed    uint64
}

// runLoad sends spec.n requests over spec.conc keep-alive connections,
// each sending its next request when the previous answer arrived (a closed
// loop, as wrk does). Every request draws its own {id}, {n} and {r:K}.
// The connections are opened before the clock starts. It stops early when
// ctx ends.
func runLoad(ctx context.Context, spec loadSpec) (loadResult, error) {
	if spec.conc < 1 || spec.n < 1 {
		return loadResult{}, fmt.Errorf("load needs at least one connection and one request (got %d, %d)", spec.conc, spec.n)
	}
	conc := min(spec.conc, spec.n)
	conns := make([]*conn, conc)
	for i := range conns {
		conns[i] = newConn(spec.addr, spec.timeout)
		if err := conns[i].dial(); err != nil {
			for _, c := range conns[:i] {
				c.close()
			}
			return loadResult{}, fmt.Errorf("opening connection %d to %s: %w", i+1, spec.addr, err)
		}
	}
	var (
		next     atomic.Int64 // sequence numbers handed out
		stop     atomic.Bool
		mu       sync.Mutex
		firstBad string
		wg       sync.WaitGroup
	)
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			stop.Store(true)
		case <-done:
		}
	}()
	bad := func(s string) {
		mu.Lock()
		if firstBad == "" {
			firstBad = s
		}
		mu.Unlock()
	}
	type tally struct {
		hist                 histogram
		answered, non2, errs int
	}
	tallies := make([]*tally, conc)
	start := time.Now()
	for w := range conc {
		t := &tally{}
		tallies[w] = t
		wg.Add(1)
		go func(c *conn) {
			defer wg.Done()
			defer c.close()
			rng := rand.New(rand.NewPCG(spec.seed, uint64(w)+1))
			var req, body, resp []byte
			for !stop.Load() {
				seq := next.Add(1)
				if seq > int64(spec.n) {
					return
				}
				v := values{seq: seq, rng: rng}
				if len(spec.req.ids) > 0 {
					v.id = spec.req.ids[rng.IntN(len(spec.req.ids))]
				}
				req, body = spec.req.build(req, body, v)
				t0 := time.Now()
				status, out, err := c.roundTrip(req, resp)
				lat := time.Since(t0)
				resp = out
				if err != nil {
					t.errs++
					bad(fmt.Sprintf("request %d: %v", seq, err))
					continue
				}
				t.hist.record(lat)
				t.answered++
				if status < 200 || status > 299 {
					t.non2++
					bad(fmt.Sprintf("request %d: HTTP %d: %s", seq, status, excerpt(out, 200)))
				}
			}
		}(conns[w])
	}
	wg.Wait()
	wall := time.Since(start)
	close(done)
	res := loadResult{wall: wall, hist: &histogram{}, firstBad: firstBad}
	for _, t := range tallies {
		res.hist.merge(&t.hist)
		res.requests += t.answered
		res.non2xx += t.non2
		res.errors += t.errs
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nil
}

// excerpt is the start of b as text.
func excerpt(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
