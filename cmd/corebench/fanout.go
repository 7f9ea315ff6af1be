package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// The subscription fan-out scenario: fanout.subscribers
// WebSocket connections (graphql-transport-ws, one subscription each to
// every Book change), then fanout.writes books created through POST
// /rest/v1 at up to fanout.rate writes a second. Every subscriber receives
// every write; the row gives the events delivered per second, the delivery
// latency (from the write's request being sent to the event read by the
// subscriber), the server's CPU per delivered event and its memory per
// open subscription (VmRSS with the subscriptions open and idle, minus
// before, divided by their count).
//
// The writer is paced (open loop at the rate) but never more than
// fanout.window writes ahead of the slowest subscriber: a server that
// delivers fewer events than the rate asks for then sets the pace, and
// the row reports the rate it sustained, instead of every subscriber's
// queue (1,000 events) overflowing and its connection closing (1008).

// scFanout names the scenario (for --only and the report).
const scFanout = "s_subscription_fanout"

// fanoutDoc is the subscription every subscriber sends.
const fanoutDoc = `subscription { subscribe(type: Book) { op id node { ... on Book { title } } } }`

// fanoutTitle prefixes the title of each book the scenario writes; the
// write's sequence number follows it, which ties an event to its write.
const fanoutTitle = "fanout "

// fanoutConfig is the scenario's configuration.
type fanoutConfig struct {
	subscribers int
	writes      int
	rate        float64 // writes a second at most
	window      int     // writes at most ahead of the slowest subscriber
	writers     int     // connections the writes go over
	dialConc    int     // WebSockets opened at once
	settle      time.Duration
}

func defaultFanoutConfig() fanoutConfig {
	return fanoutConfig{subscribers: 1000, writes: 2000, rate: 1000, window: 200, writers: 8, dialConc: 32, settle: 2 * time.Second}
}

// fanoutRow is the scenario's result.
type fanoutRow struct {
	subscribers, writes int
	writeRate           float64 // writes acknowledged a second, first send to last answer
	events              int64   // events received (writes × subscribers when none was lost)
	eventRate           float64 // events a second, first send to last event
	p50, p99, max       time.Duration
	cpuPerEvent         float64 // server CPU ms per delivered event; NaN when not measured
	cpuPerWrite         float64 // the same per write (its fan-out included)
	subKB               float64 // server VmRSS per open idle subscription, kB; NaN when not measured
	rssKB               int64   // the server's largest VmRSS during the writes, kB; -1 when not measured
	loadPct, otherPct   float64
	failed              int    // subscribers that ended early, writes that failed
	note                string // the first failure
}

// fanoutRun is the shared state of one run.
type fanoutRun struct {
	cfg   fanoutConfig
	sent  []atomic.Int64 // UnixNano when write k's request was sent
	recv  []atomic.Int32 // subscribers that received write k
	ready atomic.Int32   // subscribers that received the probe (write 0)
	lost  atomic.Int32   // subscribers whose connection ended early
	total atomic.Int64   // events received
	last  atomic.Int64   // UnixNano of the last event received
	done  atomic.Bool    // the run is over: connections closing is expected

	mu    sync.Mutex
	hists [16]histogram // shards, by subscriber
	hmu   [16]sync.Mutex
	first string
}

func (r *fanoutRun) bad(s string) {
	r.mu.Lock()
	if r.first == "" {
		r.first = s
	}
	r.mu.Unlock()
}

// wsURL is the WebSocket URL of /graphql on host.
func wsURL(host string) string { return "ws://" + host + "/graphql" }

// dialSubscriber opens a WebSocket, initialises it as the instance and
// sends the subscription.
func dialSubscriber(ctx context.Context, hc *http.Client, host string, in instance) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, wsURL(host), &websocket.DialOptions{HTTPClient: hc, Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	send := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return c.Write(ctx, websocket.MessageText, b)
	}
	fail := func(err error) (*websocket.Conn, error) {
		c.CloseNow()
		return nil, err
	}
	if err := send(map[string]any{"type": "connection_init", "payload": map[string]string{"core-domain": in.domain, "authorization": in.token}}); err != nil {
		return fail(err)
	}
	_, msg, err := c.Read(ctx)
	if err != nil {
		return fail(fmt.Errorf("waiting for connection_ack: %w", err))
	}
	if !bytes.Contains(msg, []byte(`"connection_ack"`)) {
		return fail(fmt.Errorf("want connection_ack, got %s", excerpt(msg, 200)))
	}
	if err := send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": fanoutDoc}}); err != nil {
		return fail(err)
	}
	return c, nil
}

// fanoutSeq returns the write sequence number in an event's book title;
// ok is false for a message that is no such event.
func fanoutSeq(msg []byte) (int, bool) {
	const key = `"title":"` + fanoutTitle
	i := bytes.Index(msg, []byte(key))
	if i < 0 || !bytes.Contains(msg[:i], []byte(`"type":"next"`)) {
		return 0, false
	}
	rest := msg[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(string(rest[:j]))
	return n, err == nil && n >= 0
}

// read runs subscriber i until its connection ends.
func (r *fanoutRun) read(ctx context.Context, i int, c *websocket.Conn) {
	h, hmu := &r.hists[i%len(r.hists)], &r.hmu[i%len(r.hmu)]
	probed := false
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			if !r.done.Load() {
				r.lost.Add(1)
				r.bad(fmt.Sprintf("subscriber %d: %v", i, err))
			}
			return
		}
		now := time.Now()
		k, ok := fanoutSeq(msg)
		switch {
		case !ok:
			if bytes.Contains(msg, []byte(`"type":"ping"`)) {
				_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"pong"}`))
			} else if bytes.Contains(msg, []byte(`"type":"error"`)) || bytes.Contains(msg, []byte(`"errors"`)) {
				r.bad(fmt.Sprintf("subscriber %d: %s", i, excerpt(msg, 300)))
			}
		case k == 0:
			if !probed {
				probed = true
				r.ready.Add(1)
			}
		case k < len(r.sent):
			if s := r.sent[k].Load(); s > 0 {
				hmu.Lock()
				h.record(now.Sub(time.Unix(0, s)))
				hmu.Unlock()
			}
			r.recv[k].Add(1)
			r.total.Add(1)
			r.last.Store(now.UnixNano())
		}
	}
}

// waitFor polls cond every ms until it holds, ctx ends or within passes
// without progress (progress returns a figure that grows while things
// move).
func waitFor(ctx context.Context, within time.Duration, cond func() bool, progress func() int64) error {
	lastMove, last := time.Now(), progress()
	for !cond() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p := progress(); p != last {
			last, lastMove = p, time.Now()
		} else if time.Since(lastMove) > within {
			return errors.New("no progress")
		}
		time.Sleep(200 * time.Microsecond)
	}
	return nil
}

// runFanout runs the scenario against in on srv.
func runFanout(ctx context.Context, srv *server, m *meter, in instance, cfg fanoutConfig, timeout time.Duration, waitIdle func(), p *progress) (fanoutRow, error) {
	rw := fanoutRow{subscribers: cfg.subscribers, writes: cfg.writes, cpuPerEvent: math.NaN(), cpuPerWrite: math.NaN(), subKB: math.NaN(), rssKB: -1}
	c := newClient(srv.base)
	if _, err := c.call(ctx, "raise subscriptionConnections", "PATCH", "/admin/v1/instances/"+in.domain, adminHeaders(srv.adminToken),
		map[string]any{"subscriptionConnections": cfg.subscribers + 100}); err != nil {
		return rw, err
	}
	r := &fanoutRun{cfg: cfg, sent: make([]atomic.Int64, cfg.writes+1), recv: make([]atomic.Int32, cfg.writes+1)}
	ctx, cancel := context.WithCancel(ctx)
	var readers sync.WaitGroup
	subs := make([]*websocket.Conn, cfg.subscribers)
	defer func() {
		r.done.Store(true)
		for _, s := range subs {
			if s != nil {
				s.CloseNow()
			}
		}
		cancel()
		readers.Wait()
	}()

	waitIdle()
	time.Sleep(cfg.settle)
	rssBefore := m.kB("VmRSS")
	p.printf("%s: opening %d WebSockets (graphql-transport-ws), one subscription each: %s", scFanout, cfg.subscribers, fanoutDoc)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: -1}}
	var (
		dialErr  error
		dialMu   sync.Mutex
		dialWG   sync.WaitGroup
		nextDial atomic.Int64
	)
	for range max(1, cfg.dialConc) {
		dialWG.Go(func() {
			for {
				i := int(nextDial.Add(1)) - 1
				if i >= cfg.subscribers {
					return
				}
				conn, err := dialSubscriber(ctx, hc, srv.host, in)
				if err != nil {
					dialMu.Lock()
					dialErr = errors.Join(dialErr, fmt.Errorf("subscriber %d: %w", i, err))
					dialMu.Unlock()
					nextDial.Store(int64(cfg.subscribers)) // stop opening more
					return
				}
				subs[i] = conn
				readers.Go(func() { r.read(ctx, i, conn) })
			}
		})
	}
	dialWG.Wait()
	if dialErr != nil {
		return rw, dialErr
	}

	// The probe: a write numbered 0 must reach every subscriber, which
	// shows each subscription runs before the clock starts. A subscribe
	// message has no answer, so a subscription may start after a probe
	// committed: the probe is written again every 100 ms until all have
	// one (later copies are ignored).
	write := newRequest(srv.host, "POST", mustTemplate("/rest/v1"),
		mustTemplate(`{"values":{"Book":[{"title":"`+fanoutTitle+`{n}","authorid":1,"price":1}]}}`), nil,
		[][2]string{{"core-domain", in.domain}, {"authorization", in.token}})
	probe := newConn(srv.host, timeout)
	defer probe.close()
	buf, _ := write.build(nil, nil, values{seq: 0})
	allReady := func() bool { return int(r.ready.Load()) >= cfg.subscribers }
	for deadline := time.Now().Add(30 * time.Second); !allReady(); {
		status, out, err := probe.roundTrip(buf, nil)
		if err == nil && (status < 200 || status > 299) {
			err = fmt.Errorf("HTTP %d: %s", status, excerpt(out, 300))
		}
		if err != nil {
			return rw, fmt.Errorf("%s: the probe write: %w", scFanout, err)
		}
		for next := time.Now().Add(100 * time.Millisecond); !allReady() && time.Now().Before(next); {
			time.Sleep(time.Millisecond)
		}
		if r.lost.Load() > 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return rw, fmt.Errorf("%s: %d of %d subscribers received a probe write within 30 s (%s)", scFanout, r.ready.Load(), cfg.subscribers, r.first)
		}
	}
	time.Sleep(cfg.settle)
	rssSubs := m.kB("VmRSS")
	if rssBefore >= 0 && rssSubs >= 0 {
		rw.subKB = float64(rssSubs-rssBefore) / float64(cfg.subscribers)
	}
	p.printf("  %d subscribers ready; server VmRSS %s before, %s with them open", cfg.subscribers, fmtMB(rssBefore), fmtMB(rssSubs))

	waitIdle()
	p.printf("  %d writes (POST /rest/v1, one book each) at up to %.0f/s, at most %d ahead of the slowest subscriber, over %d connections",
		cfg.writes, cfg.rate, cfg.window, cfg.writers)
	profiled := srv.profile(ctx, scFanout, p)
	defer profiled()
	jobs := make(chan int)
	var (
		writers sync.WaitGroup
		acked   atomic.Int64
		failed  atomic.Int64
		lastAck atomic.Int64
	)
	for range max(1, cfg.writers) {
		cn := newConn(srv.host, timeout)
		writers.Go(func() {
			defer cn.close()
			var buf, body, resp []byte
			for k := range jobs {
				buf, body = write.build(buf, body, values{seq: int64(k)})
				r.sent[k].Store(time.Now().UnixNano())
				status, out, err := cn.roundTrip(buf, resp)
				resp = out
				switch {
				case err != nil:
					failed.Add(1)
					r.bad(fmt.Sprintf("write %d: %v", k, err))
				case status < 200 || status > 299:
					failed.Add(1)
					r.bad(fmt.Sprintf("write %d: HTTP %d: %s", k, status, excerpt(out, 200)))
				default:
					acked.Add(1)
					lastAck.Store(time.Now().UnixNano())
				}
			}
		})
	}
	stopRSS := m.watchRSS()
	a := m.read()
	start := time.Now()
	live := func() int32 { return int32(cfg.subscribers) - r.lost.Load() }
	var feedErr error
	lastSaid := start
	for k := 1; k <= cfg.writes; k++ {
		if err := ctx.Err(); err != nil {
			feedErr = err
			break
		}
		if d := time.Until(start.Add(time.Duration(float64(k-1) / cfg.rate * float64(time.Second)))); d > 0 {
			time.Sleep(d)
		}
		if j := k - cfg.window; j >= 1 {
			if err := waitFor(ctx, 30*time.Second, func() bool { return r.recv[j].Load() >= live() },
				func() int64 { return r.total.Load() }); err != nil {
				feedErr = fmt.Errorf("write %d waited 30 s for write %d to reach every subscriber (%d of %d did): %w", k, j, r.recv[j].Load(), live(), err)
				break
			}
		}
		jobs <- k
		if time.Since(lastSaid) >= 10*time.Second {
			lastSaid = time.Now()
			p.printf("  %d writes sent, %d events received (%.0f/s)", k, r.total.Load(), float64(r.total.Load())/time.Since(start).Seconds())
		}
	}
	close(jobs)
	writers.Wait()
	if feedErr == nil {
		want := func() bool { return r.total.Load() >= int64(live())*acked.Load() }
		if err := waitFor(ctx, 30*time.Second, want, func() int64 { return r.total.Load() }); err != nil {
			feedErr = fmt.Errorf("%d of %d events arrived: %w", r.total.Load(), int64(live())*acked.Load(), err)
		}
	}
	b := m.read()
	rw.rssKB = stopRSS()
	if feedErr != nil {
		return rw, fmt.Errorf("%s: %w (%s)", scFanout, feedErr, r.first)
	}
	r.done.Store(true)
	var h histogram
	for i := range r.hists {
		h.merge(&r.hists[i])
	}
	rw.events = r.total.Load()
	rw.p50, rw.p99, rw.max = h.percentile(50), h.percentile(99), h.percentile(100)
	if secs := time.Unix(0, lastAck.Load()).Sub(start).Seconds(); secs > 0 {
		rw.writeRate = float64(acked.Load()) / secs
	}
	if secs := time.Unix(0, r.last.Load()).Sub(start).Seconds(); secs > 0 {
		rw.eventRate = float64(rw.events) / secs
	}
	if cpu := m.cpuMS(a, b); !math.IsNaN(cpu) && rw.events > 0 {
		rw.cpuPerEvent = cpu / float64(rw.events)
		rw.cpuPerWrite = cpu / float64(acked.Load())
	}
	rw.loadPct, rw.otherPct = m.selfPct(a, b), m.otherPct(a, b)
	rw.failed = int(failed.Load()) + int(r.lost.Load())
	rw.note = r.first
	return rw, nil
}

// fanoutTable renders the scenario's row.
func fanoutTable(r fanoutRow) string {
	var b strings.Builder
	b.WriteString("| scenario | subscribers | writes | writes/s | events | events/s | delivery p50 ms | p99 ms | max ms | server CPU ms/event | server CPU ms/write | server KB/subscription | server max RSS MB | load generator CPU % | failed | other CPU % |\n" +
		"|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	perEvent := "-"
	if !math.IsNaN(r.cpuPerEvent) {
		perEvent = strconv.FormatFloat(r.cpuPerEvent, 'f', 4, 64)
	}
	fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s |\n",
		scFanout, fmtInt(int64(r.subscribers)), fmtInt(int64(r.writes)), fmtRate(r.writeRate), fmtInt(r.events), fmtRate(r.eventRate),
		fmtMS(r.p50), fmtMS(r.p99), fmtMS(r.max), perEvent, fmtCPU(r.cpuPerWrite), fmtKB(r.subKB), strings.TrimSuffix(fmtMB(r.rssKB), " MB"), fmtPct(r.loadPct), r.failed, fmtPct(r.otherPct))
	return b.String()
}

// fmtKB writes a kB figure with one decimal; "-" when not measured.
func fmtKB(kb float64) string {
	if math.IsNaN(kb) {
		return "-"
	}
	return strconv.FormatFloat(kb, 'f', 1, 64)
}
