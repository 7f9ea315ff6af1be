package mongo_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/mongo"
	"github.com/corehq/core/store/mongo/mongotest"
)

func TestOpenUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	cfg := mongotest.Config("mongodb://"+addr+"/", "x")
	cfg.ConnectTimeout = 300 * time.Millisecond
	if _, err := mongo.Open(context.Background(), cfg); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Open of an unreachable server = %v, want ErrUnavailable", err)
	}
}

// TestOutage cuts the connection to the server: operations fail with
// ErrUnavailable within their time-out, and the same store serves again
// once the server is back.
func TestOutage(t *testing.T) {
	t.Parallel()
	uri, db := mongotest.Database(t)
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "mongodb" || u.Host == "" {
		t.Skipf("cannot put a proxy in front of %s", u.Redacted())
	}
	p := newProxy(t, u.Host)
	u.Host = p.addr
	q := u.Query()
	q.Set("directConnection", "true")
	u.RawQuery = q.Encode()
	cfg := mongotest.Config(u.String(), db)
	cfg.OpTimeout = 500 * time.Millisecond
	cfg.ConnectTimeout = 300 * time.Millisecond
	s, err := mongo.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	op := store.Op{Kind: store.OpUpsert, Type: "Book", ID: "b1", Set: map[string]any{"title": "T"}, Now: time.Now()}
	if _, err := s.Write(ctx, "inst1", []store.Op{op}, store.Quota{}); err != nil {
		t.Fatal(err)
	}

	p.setDown(true)
	if err := s.Ping(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Ping during the outage = %v, want ErrUnavailable", err)
	}
	if _, err := s.Get(ctx, "inst1", "Book", "b1"); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Get during the outage = %v, want ErrUnavailable", err)
	}
	if _, err := s.Find(ctx, "inst1", &store.Query{Type: "Book"}); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Find during the outage = %v, want ErrUnavailable", err)
	}

	p.setDown(false)
	deadline := time.Now().Add(15 * time.Second)
	for s.Ping(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the store did not serve again after the outage")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r, err := s.Get(ctx, "inst1", "Book", "b1"); err != nil || r.Fields["title"] != "T" {
		t.Errorf("Get after the outage = %v, %v", r, err)
	}
}

// proxy forwards loopback TCP connections to a server; setDown(true) cuts
// the connections it carries and refuses new ones.
type proxy struct {
	addr   string
	target string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String(), target: target}
	t.Cleanup(func() { ln.Close(); p.setDown(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *proxy) serve(c net.Conn) {
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		return
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.conns = append(p.conns, c, s)
	p.mu.Unlock()
	go func() { _, _ = io.Copy(s, c); s.Close() }()
	_, _ = io.Copy(c, s)
	c.Close()
}

func (p *proxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}
