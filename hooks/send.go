package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/corehq/core/internal/netguard"
	"github.com/corehq/core/store"
)

// excerptBytes is how much of an answer's body the delivery log keeps.
const excerptBytes = 256

// sender posts messages to hook endpoints.
type sender struct {
	client *http.Client
	max    int64
}

func newSender(cfg Config) *sender {
	control := func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", netguard.ErrNotPublic, address)
		}
		return netguard.Public(ap.Addr())
	}
	d := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivate {
		d.Control = control
	}
	tr := &http.Transport{
		Proxy:                  nil, // the check must see the real destination
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    cfg.Timeout,
		ResponseHeaderTimeout:  cfg.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &sender{max: cfg.MaxResponse, client: &http.Client{
		Transport: tr,
		Timeout:   cfg.Timeout,
		// A redirect is an answer like any other non-2xx: not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// message is one post of a change.
type message struct {
	url  string
	id   string
	key  []byte
	body []byte
}

// outcome is what came of a post.
type outcome struct {
	at       time.Time // when it ended
	status   int
	millis   int64
	err      error
	response string
}

// send posts m, signed at the current time, and reads the answer up to
// the bound. A status other than 2xx is a failure.
func (s *sender) send(ctx context.Context, m *message) outcome {
	start := time.Now()
	ts := start.Unix()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(m.body))
	if err != nil {
		return outcome{err: errors.New("the url cannot be posted to")}
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("user-agent", "core-event-hooks/1")
	req.Header.Set("webhook-id", m.id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", Sign(m.key, m.id, ts, m.body))
	res, err := s.client.Do(req)
	if err != nil {
		return outcome{at: time.Now(), millis: time.Since(start).Milliseconds(), err: postError(err)}
	}
	defer res.Body.Close()
	body, rerr := io.ReadAll(io.LimitReader(res.Body, s.max))
	o := outcome{at: time.Now(), status: res.StatusCode, millis: time.Since(start).Milliseconds(), response: excerpt(body)}
	switch {
	case res.StatusCode < 200 || res.StatusCode > 299:
		o.err = fmt.Errorf("the endpoint answered %d", res.StatusCode)
	case rerr != nil:
		o.err = errors.New("reading the answer failed")
	}
	return o
}

// postError says why a post got no answer, without the Go error's
// internals (which may name addresses the tenant should not learn of
// beyond what it configured).
func postError(err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, netguard.ErrNotPublic):
		return errors.New("the url's host is not a public address (loopback, private and link-local addresses are refused)")
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return errors.New("no answer within the time-out")
	case errors.Is(err, context.Canceled):
		return errors.New("the post was stopped (the service is shutting down)")
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Errorf("the url's host %q could not be resolved", dns.Name)
	}
	return errors.New("the connection failed")
}

// excerpt is the beginning of a body as valid UTF-8.
func excerpt(b []byte) string {
	if len(b) > excerptBytes {
		b = b[:excerptBytes]
	}
	for len(b) > 0 && !utf8.Valid(b) {
		b = b[:len(b)-1]
	}
	return string(b)
}

// item is a change of a page and its post: msg nil when the hook does
// not take it; out once tried.
type item struct {
	change *store.Change
	msg    *message
	tried  bool
	out    outcome
}

// sendAll posts the messages of items, up to parallel at once: the
// changes of one record one after another in feed order, a record's
// later changes not at all once one of them failed (they wait for its
// retry, which keeps them in order).
func (s *sender) sendAll(ctx context.Context, items []item, parallel int) {
	var order []string
	byRecord := map[string][]*item{}
	for i := range items {
		it := &items[i]
		if it.msg == nil {
			continue
		}
		k := it.change.Type + "\x00" + it.change.ID
		if byRecord[k] == nil {
			order = append(order, k)
		}
		byRecord[k] = append(byRecord[k], it)
	}
	slots := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for _, k := range order {
		slots <- struct{}{}
		wg.Add(1)
		go func(list []*item) {
			defer func() { <-slots; wg.Done() }()
			for _, it := range list {
				if ctx.Err() != nil {
					return
				}
				it.out, it.tried = s.send(ctx, it.msg), true
				if it.out.err != nil {
					return
				}
			}
		}(byRecord[k])
	}
	wg.Wait()
}
