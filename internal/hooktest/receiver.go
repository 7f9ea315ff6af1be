// Package hooktest is a receiver of event hook posts for tests: a real
// HTTP server that checks each post's Standard Webhooks signature with
// the specification's algorithm (written here apart from package hooks,
// so that a mistake in one is not repeated in the other), answers 500
// while told to fail, and keeps the events it accepted.
package hooktest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corehq/core/internal/poll"
)

// Event is an accepted post.
type Event struct {
	ID        string         // webhook-id
	Type      string         `json:"type"`
	Op        string         `json:"op"`
	Record    string         `json:"id"`
	Node      map[string]any `json:"node"`
	Instance  string         `json:"instance"`
	Timestamp string         `json:"timestamp"`
	// Arrived is when the receiver accepted it.
	Arrived time.Time `json:"-"`
}

// Receiver is a running receiver.
type Receiver struct {
	URL    string
	Secret string // whsec_…
	// Fail makes it answer 500 (and keep nothing) while set.
	Fail atomic.Bool
	// Delay is how long each post takes to answer (a slow endpoint), in
	// nanoseconds.
	Delay atomic.Int64

	key    []byte
	mu     sync.Mutex
	events []Event         // accepted, in arrival order, repeats included
	failed int             // posts answered 500
	bad    []string        // why posts were refused (bad signatures)
	seen   map[string]bool // webhook-ids accepted
}

// Start starts a receiver on loopback with a new secret; it stops when
// the test ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	r := &Receiver{key: key, Secret: "whsec_" + base64.StdEncoding.EncodeToString(key), seen: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/hook"
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if d := r.Delay.Load(); d > 0 {
		time.Sleep(time.Duration(d)) // the endpoint's own slowness, not a wait for something
	}
	if why := r.verify(req.Header, body); why != "" {
		r.mu.Lock()
		r.bad = append(r.bad, why)
		r.mu.Unlock()
		http.Error(w, why, http.StatusUnauthorized)
		return
	}
	if r.Fail.Load() {
		r.mu.Lock()
		r.failed++
		r.mu.Unlock()
		http.Error(w, "receiver down for the test", http.StatusInternalServerError)
		return
	}
	var e Event
	if err := json.Unmarshal(body, &e); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	e.ID, e.Arrived = req.Header.Get("webhook-id"), time.Now()
	r.mu.Lock()
	r.events = append(r.events, e)
	r.seen[e.ID] = true
	r.mu.Unlock()
	_, _ = io.WriteString(w, "ok")
}

// verify checks a post per the Standard Webhooks specification: the
// signed content is "{webhook-id}.{webhook-timestamp}.{body}", signed
// with HMAC-SHA256 by the base64-decoded secret after "whsec_"; the
// webhook-signature header holds space-separated "v1,{base64}" entries,
// one of which must match; the timestamp must be within five minutes.
func (r *Receiver) verify(h http.Header, body []byte) string {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return "missing webhook-id, webhook-timestamp or webhook-signature"
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return "webhook-timestamp is not a recent unix time: " + ts
	}
	mac := hmac.New(sha256.New, r.key)
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	want := mac.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		v, b64, ok := strings.Cut(s, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return ""
		}
	}
	return "no valid v1 signature in " + sigs
}

// Events returns the accepted events, each webhook-id once (the first
// time it came), in arrival order.
func (r *Receiver) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	once := map[string]bool{}
	var out []Event
	for _, e := range r.events {
		if !once[e.ID] {
			once[e.ID] = true
			out = append(out, e)
		}
	}
	return out
}

// Posts returns how many posts were accepted (repeats included), answered
// 500, and refused for their signature (with why).
func (r *Receiver) Posts() (accepted, failed int, bad []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events), r.failed, append([]string(nil), r.bad...)
}

// WaitFor polls until cond holds of the receiver (poll.UntilShowing:
// nothing is timed), failing the test with the receiver's posts.
func (r *Receiver) WaitFor(t testing.TB, what string, cond func(*Receiver) bool) {
	t.Helper()
	poll.UntilShowing(t, what, func() bool { return cond(r) }, func() string {
		acc, failed, bad := r.Posts()
		return fmt.Sprintf("hooktest: accepted %d, failed %d, bad %v, events %+v", acc, failed, bad, r.Events())
	})
}
