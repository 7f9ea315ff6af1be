package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/corehq/core/internal/periodic"
	"github.com/corehq/core/store"
)

// SharedFailures keeps the failed-login counts in the store, so that
// processes serving one MongoDB share them: N processes do not multiply
// the allowance by N. A count is a run of documents of kind "loginfail",
// one per failure, keyed <hash of the throttle key>.<window start>.<n> in
// fixed windows (the window's start is the time truncated to its span):
// the n-th failure of a window creates document n with CreateDoc, which
// only one writer can do, so concurrent failures on several processes
// each take their own number and none is lost; a key is over its limit
// when document limit-1 of the current window exists (one read). Sweep
// removes the documents of ended windows.
type SharedFailures struct {
	st  store.Store
	now func() time.Time
}

// docLoginFail is the kind of the failure documents.
const docLoginFail = "loginfail"

// NewSharedFailures keeps counts in st, reading the time from now.
func NewSharedFailures(st store.Store, now func() time.Time) *SharedFailures {
	return &SharedFailures{st: st, now: now}
}

// windowKey is the documents' key prefix of key's current window, and
// the window's end.
func windowKey(key string, span time.Duration, now time.Time) (string, time.Time) {
	h := sha256.Sum256([]byte(key))
	start := now.Truncate(span)
	return hex.EncodeToString(h[:12]) + "." + strconv.FormatInt(start.Unix(), 10) + ".", start.Add(span)
}

// blocked reports whether key has limit failures in its current window,
// and for how long.
func (s *SharedFailures) blocked(ctx context.Context, key string, limit int, span time.Duration) (time.Duration, error) {
	now := s.now()
	prefix, end := windowKey(key, span, now)
	_, err := s.st.GetDoc(ctx, docLoginFail, prefix+strconv.Itoa(limit-1))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, err
	}
	return end.Sub(now), nil
}

// fail counts one failure of key (up to limit: more are not needed).
func (s *SharedFailures) fail(ctx context.Context, key string, limit int, span time.Duration) error {
	prefix, end := windowKey(key, span, s.now())
	mine := []byte(strconv.FormatInt(end.Unix(), 10) + " " + randomTag())
	for n := range limit {
		got, err := s.st.CreateDoc(ctx, docLoginFail, prefix+strconv.Itoa(n), mine)
		if err != nil {
			return err
		}
		if string(got) == string(mine) {
			return nil
		}
	}
	return nil
}

// Sweep removes the failure documents of windows that have ended.
func (s *SharedFailures) Sweep(ctx context.Context) error {
	docs, err := s.st.ListDocs(ctx, docLoginFail)
	if err != nil {
		return err
	}
	now := s.now().Unix()
	for key, doc := range docs {
		end, _, _ := strings.Cut(string(doc), " ")
		if e, err := strconv.ParseInt(end, 10, 64); err != nil || e <= now {
			if err := s.st.DeleteDoc(ctx, docLoginFail, key); err != nil {
				return err
			}
		}
	}
	return nil
}

// SweepEvery sweeps every interval until ctx ends.
func (s *SharedFailures) SweepEvery(ctx context.Context, every time.Duration, fail func(error)) {
	periodic.Run(ctx, every, s.Sweep, fail)
}

// randomTag tells this writer's document from another's.
func randomTag() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
