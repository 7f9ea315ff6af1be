package tenant

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/corehq/core/store"
)

// Peers counts the cored processes serving one store (on MongoDB, several
// may): each writes a heartbeat document every interval and counts the
// heartbeats seen within three intervals, its own included; heartbeats
// older than ten intervals are removed. What a process divides among its
// peers (an instance's rate limit) is then shared within about one
// interval of a process starting or stopping. Safe for concurrent use.
type Peers struct {
	st    store.Store
	id    string
	every time.Duration
	now   func() time.Time
	n     atomic.Int64
}

// docPeer is the kind of the heartbeat documents.
const docPeer = "peer"

// NewPeers returns the count of the processes on st, 1 until Run has
// looked.
func NewPeers(st store.Store, every time.Duration) *Peers {
	var b [8]byte
	_, _ = rand.Read(b[:])
	p := &Peers{st: st, id: hex.EncodeToString(b[:]), every: every, now: time.Now}
	p.n.Store(1)
	return p
}

// Count is the number of processes seen, at least 1.
func (p *Peers) Count() int { return int(p.n.Load()) }

// Run beats every interval until ctx ends, then removes this process's
// heartbeat; a failed beat goes to fail and leaves the count as it was.
func (p *Peers) Run(ctx context.Context, fail func(error)) {
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		if err := p.Beat(ctx); err != nil && ctx.Err() == nil {
			fail(err)
		}
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			_ = p.st.DeleteDoc(dctx, docPeer, p.id)
			cancel()
			return
		case <-t.C:
		}
	}
}

// heartbeat is a peer document.
type heartbeat struct {
	Seen time.Time `json:"seen"`
}

// Beat writes this process's heartbeat and counts the live ones.
func (p *Peers) Beat(ctx context.Context) error {
	now := p.now()
	raw, _ := json.Marshal(heartbeat{Seen: now})
	if err := p.st.PutDoc(ctx, docPeer, p.id, raw); err != nil {
		return err
	}
	docs, err := p.st.ListDocs(ctx, docPeer)
	if err != nil {
		return err
	}
	n := 0
	for id, raw := range docs {
		var h heartbeat
		if json.Unmarshal(raw, &h) != nil {
			continue
		}
		switch age := now.Sub(h.Seen); {
		case age <= 3*p.every:
			n++
		case age > 10*p.every:
			_ = p.st.DeleteDoc(ctx, docPeer, id)
		}
	}
	p.n.Store(int64(max(1, n)))
	return nil
}
