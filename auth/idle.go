package auth

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
)

// FieldSessionsUsed is the Account field that records, per session id,
// the Unix time in microseconds a session was last seen in use, for the
// idle expiry of sessions (Instance.SessionIdleTimeout). Like the
// revocation marks it is not part of the Account type, so no API can
// read, filter or set it.
const FieldSessionsUsed = "sessionsUsed"

// maxTrackedSessions bounds the sessions one account's record tracks. The
// session used longest ago is dropped beyond it; it then counts from its
// issue time, so it can only end sooner, never later.
const maxTrackedSessions = 256

// idleStep is how stale a session's recorded use may be: a use is written
// only when the recorded one is at least this old, so a session in use
// costs at most one write per step (a minute; a quarter of the timeout
// when that is shorter), not one per request. A session therefore ends
// after between timeout − step and timeout without use.
func idleStep(timeout time.Duration) time.Duration { return min(time.Minute, timeout/4) }

// lastUse is when a session was last seen in use: its issue time, or the
// later use its account's record holds.
func lastUse(acct *store.Record, c Claims) int64 {
	used, _ := acct.Fields[FieldSessionsUsed].(map[string]any)
	return max(c.IssuedMicros, toInt64(used[c.Session]))
}

// checkIdle ends a session that has not been used for timeout
// (UNAUTHENTICATED), and otherwise records its use on the account's record
// when the recorded one is a step old or more. The recording upsert
// requires the password, so that it cannot create an account deleted
// meanwhile: such a session is refused too.
func checkIdle(ctx context.Context, st store.Store, inst Instance, acct *store.Record, c Claims, now time.Time) error {
	timeout := inst.SessionIdleTimeout
	if timeout <= 0 {
		return nil
	}
	nowMicros := now.UnixMicro()
	last := lastUse(acct, c)
	if nowMicros-last >= timeout.Microseconds() {
		return errcode.New(errcode.Unauthenticated, "invalid or expired session token")
	}
	if nowMicros-last < idleStep(timeout).Microseconds() {
		return nil
	}
	op := store.Op{Kind: store.OpUpsert, Type: "Account", ID: acct.ID, Now: now, Required: []string{FieldPassword},
		Set: map[string]any{FieldSessionsUsed: recordUse(acct, c.Session, nowMicros, timeout)}}
	if _, err := st.Write(ctx, inst.ID, []store.Op{op}, store.Quota{}); err != nil {
		if errors.Is(err, store.ErrRequired) {
			return errcode.New(errcode.Unauthenticated, "invalid or expired session token")
		}
		return errcode.Wrap(errcode.Unavailable, err, "the store is unavailable; try again")
	}
	return nil
}

// recordUse returns the account's tracked sessions with session used at
// now: those idle past the timeout are dropped (they have ended), and the
// ones used longest ago beyond maxTrackedSessions.
func recordUse(acct *store.Record, session string, now int64, timeout time.Duration) map[string]any {
	old, _ := acct.Fields[FieldSessionsUsed].(map[string]any)
	out := make(map[string]any, len(old)+1)
	for sid, v := range old {
		if at := toInt64(v); now-at < timeout.Microseconds() {
			out[sid] = at
		}
	}
	out[session] = now
	if len(out) > maxTrackedSessions {
		sids := slices.SortedFunc(maps.Keys(out), func(a, b string) int { return cmp.Compare(toInt64(out[b]), toInt64(out[a])) })
		for _, sid := range sids[maxTrackedSessions:] {
			delete(out, sid)
		}
	}
	return out
}
