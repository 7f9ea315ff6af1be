package auth

import (
	"fmt"
	"testing"
	"time"

	"github.com/corehq/core/store"
)

// TestRecordUse: the tracked sessions of an account drop those idle past
// the timeout and, beyond maxTrackedSessions, those used longest ago; the
// session in use is always kept.
//
// hostile checklist 14: idle expiry → 401 (the bookkeeping it rests on).
func TestRecordUse(t *testing.T) {
	t.Parallel()
	const timeout = time.Hour
	now := time.Unix(1_800_000_000, 0).UnixMicro()
	used := map[string]any{"stale": now - timeout.Microseconds(), "fresh": float64(now - time.Minute.Microseconds())}
	for i := range maxTrackedSessions + 10 {
		used[fmt.Sprintf("s%03d", i)] = now - int64(i+2)*time.Second.Microseconds()
	}
	got := recordUse(&store.Record{Fields: map[string]any{FieldSessionsUsed: used}}, "me", now, timeout)
	if len(got) != maxTrackedSessions {
		t.Errorf("tracked %d sessions, want %d", len(got), maxTrackedSessions)
	}
	if got["me"] != now || got["fresh"] == nil || got["stale"] != nil {
		t.Errorf("me %v (want %d), fresh %v (want kept), stale %v (want dropped)", got["me"], now, got["fresh"], got["stale"])
	}
	if got["s000"] == nil || got[fmt.Sprintf("s%03d", maxTrackedSessions+9)] != nil {
		t.Errorf("the most recently used sessions are not the ones kept")
	}
	// Within a step nothing is due; idle past the timeout ends it.
	acct := &store.Record{Fields: map[string]any{FieldSessionsUsed: map[string]any{"sid": now}}}
	c := Claims{Session: "sid", IssuedMicros: now - 2*timeout.Microseconds()}
	if lastUse(acct, c) != now {
		t.Errorf("lastUse = %d, want the recorded use %d", lastUse(acct, c), now)
	}
	if idleStep(timeout) != time.Minute || idleStep(2*time.Second) != 500*time.Millisecond {
		t.Errorf("idleStep: %v and %v, want 1m and 500ms", idleStep(timeout), idleStep(2*time.Second))
	}
}
