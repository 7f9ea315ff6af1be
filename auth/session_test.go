package auth

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt"
)

func TestSessionTokens(t *testing.T) {
	t.Parallel()
	s := NewSessions([]byte("a secret of thirty-two bytes, ok"))
	now := time.Unix(1_800_000_000, 0)
	token, c := s.Issue("inst1", "acct1", now, time.Hour)
	if !IsSessionToken(token) {
		t.Fatalf("token %q lacks the session prefix", token)
	}
	got, err := s.Parse("inst1", token, now.Add(59*time.Minute))
	if err != nil || got != c {
		t.Fatalf("Parse = %+v, %v; want %+v", got, err, c)
	}
	cases := map[string]struct {
		inst, token string
		at          time.Time
	}{
		"another instance": {"inst2", token, now},
		"expired":          {"inst1", token, now.Add(time.Hour)},
		"tampered payload": {"inst1", token[:6] + "x" + token[7:], now},
		"tampered mac":     {"inst1", token[:len(token)-2] + "AA", now},
		"another secret": {"inst1", func() string {
			t, _ := NewSessions([]byte("another secret of thirty-two by")).Issue("inst1", "acct1", now, time.Hour)
			return t
		}(), now},
		"not a token": {"inst1", "cs1.", now},
	}
	for name, tc := range cases {
		if _, err := s.Parse(tc.inst, tc.token, tc.at); err == nil {
			t.Errorf("%s: Parse accepted it", name)
		}
	}
}

func TestRevoked(t *testing.T) {
	t.Parallel()
	c := Claims{Session: "s1", IssuedMicros: 100}
	for _, tc := range []struct {
		name   string
		fields map[string]any
		want   bool
	}{
		{"never revoked", map[string]any{}, false},
		{"revoked after issue", map[string]any{FieldSessionsAfter: int64(100)}, true},
		{"issued after revocation", map[string]any{FieldSessionsAfter: float64(99)}, false},
		{"kept session", map[string]any{FieldSessionsAfter: int64(200), FieldKeepSession: "s1"}, false},
		{"other kept session", map[string]any{FieldSessionsAfter: int64(200), FieldKeepSession: "s2"}, true},
	} {
		if got := Revoked(&store.Record{Fields: tc.fields}, c); got != tc.want {
			t.Errorf("%s: Revoked = %v", tc.name, got)
		}
	}
}

func TestThrottle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Unix(0, 0)
	th := NewThrottle(ThrottleConfig{PerAccount: 3, AccountWindow: time.Minute, PerClient: 5, ClientWindow: time.Second}, func() time.Time { return now })
	for i := 0; i < 3; i++ {
		if blocked, _ := th.Blocked(ctx, "ada", "ip1"); blocked {
			t.Fatalf("blocked after %d failures", i)
		}
		th.Fail(ctx, "ada", "ip1")
	}
	if blocked, wait := th.Blocked(ctx, "ada", "ip2"); !blocked || wait != time.Minute {
		t.Errorf("after 3 failures: blocked %v, wait %v; want true, 1m", blocked, wait)
	}
	now = now.Add(time.Minute)
	if blocked, _ := th.Blocked(ctx, "ada", "ip1"); blocked {
		t.Error("still blocked after the window")
	}
	for i := 0; i < 5; i++ {
		th.Fail(ctx, "user"+string(rune('a'+i)), "ip9")
	}
	if blocked, _ := th.Blocked(ctx, "someone", "ip9"); !blocked {
		t.Error("a client with 5 failures is not blocked")
	}
}

// BenchmarkAuthenticateSession is the cost a session token adds to a
// request: the signature check and the account read (bolt).
func BenchmarkAuthenticateSession(b *testing.B) {
	st, err := bolt.Open(filepath.Join(b.TempDir(), "b.db"), bolt.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if _, err := st.Write(ctx, "inst1", []store.Op{{Kind: store.OpUpsert, Type: "Account", ID: "acct1", Set: map[string]any{"enabled": true}, Now: time.Now()}}, store.Quota{}); err != nil {
		b.Fatal(err)
	}
	a := NewAccounts([]byte("a secret of thirty-two bytes, ok"))
	inst := Instance{ID: "inst1"}
	token, _ := a.Sessions.Issue("inst1", "acct1", a.Now(), time.Hour)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if p, err := a.Authenticate(ctx, st, inst, token); err != nil || p.Kind != User {
			b.Fatal(p, err)
		}
	}
}
