package auth

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/keyring"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt"
)

func TestSessionTokens(t *testing.T) {
	t.Parallel()
	s := NewSessions(keyring.Hold(keyring.Generate()))
	now := time.Unix(1_800_000_000, 0)
	token, c := s.Issue("inst1", "acct1", now, time.Hour)
	if !IsSessionToken(token) {
		t.Fatalf("token %q lacks the session prefix", token)
	}
	got, err := s.Parse("inst1", token, now.Add(59*time.Minute))
	if err != nil || got != c {
		t.Fatalf("Parse = %+v, %v; want %+v", got, err, c)
	}
	kidEnd := len(sessionPrefix) + strings.IndexByte(token[len(sessionPrefix):], '.')
	cases := map[string]struct {
		inst, token string
		at          time.Time
	}{
		"another instance": {"inst2", token, now},
		"expired":          {"inst1", token, now.Add(time.Hour)},
		"tampered payload": {"inst1", token[:kidEnd+3] + "x" + token[kidEnd+4:], now},
		"tampered mac":     {"inst1", token[:len(token)-2] + "AA", now},
		"another key id":   {"inst1", sessionPrefix + "other" + token[kidEnd:], now},
		"no key id":        {"inst1", sessionPrefix + token[kidEnd+1:], now},
		"another ring": {"inst1", func() string {
			t, _ := NewSessions(keyring.Hold(keyring.Generate())).Issue("inst1", "acct1", now, time.Hour)
			return t
		}(), now},
		"the old form":  {"inst1", legacyPrefix + token[kidEnd+1:], now},
		"not a token":   {"inst1", "cs2.", now},
		"only a key id": {"inst1", token[:kidEnd+1], now},
	}
	for name, tc := range cases {
		if _, err := s.Parse(tc.inst, tc.token, tc.at); err == nil {
			t.Errorf("%s: Parse accepted it", name)
		}
	}
}

// TestSessionIDEntropy: each token names a session id of 16 random bytes,
// read back from the token itself: 1,000 tokens of one account issued at
// one instant are all different, and each of the 128 bits is set in some
// and clear in others (a bit stuck in all 1,000 would happen by chance
// with a probability of 2^-999).
//
// hostile checklist 13: an issued session token carries at least 128
// bits of entropy.
func TestSessionIDEntropy(t *testing.T) {
	t.Parallel()
	s := NewSessions(keyring.Hold(keyring.Generate()))
	now := time.Unix(1_800_000_000, 0)
	seen := map[string]bool{}
	var ones, zeros [16]byte // the bits seen set, and seen clear
	for range 1000 {
		token, _ := s.Issue("inst1", "acct1", now, time.Hour)
		c, err := s.Parse("inst1", token, now)
		if err != nil {
			t.Fatal(err)
		}
		sid, err := base64.RawURLEncoding.DecodeString(c.Session)
		if err != nil || len(sid) != 16 {
			t.Fatalf("session id %q: %d bytes (%v), want 16", c.Session, len(sid), err)
		}
		if seen[c.Session] {
			t.Fatalf("session id %q issued twice", c.Session)
		}
		seen[c.Session] = true
		for i, b := range sid {
			ones[i] |= b
			zeros[i] |= ^b
		}
	}
	for i := range 16 {
		if ones[i] != 0xff || zeros[i] != 0xff {
			t.Errorf("byte %d of the session ids: bits set %08b, bits clear %08b; want every bit both", i, ones[i], zeros[i])
		}
	}
}

// TestSessionKeyRotation: a token stays valid when the ring rotates, and
// ends when its key is retired; tokens issued after the rotation name the
// new key.
func TestSessionKeyRotation(t *testing.T) {
	t.Parallel()
	r1 := keyring.Generate()
	file := filepath.Join(t.TempDir(), "core.keys")
	if err := keyring.CreateFile(file, r1); err != nil {
		t.Fatal(err)
	}
	keys, err := keyring.OpenFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSessions(keys)
	now := time.Unix(1_800_000_000, 0)
	before, _ := s.Issue("inst1", "acct1", now, time.Hour)
	r2, k2, _ := r1.Rotate()
	if err := keyring.WriteFile(file, r2); err != nil {
		t.Fatal(err)
	}
	if changed, err := keys.Reload(); !changed || err != nil {
		t.Fatalf("reload: %v %v", changed, err)
	}
	after, _ := s.Issue("inst1", "acct1", now, time.Hour)
	if !strings.HasPrefix(after, sessionPrefix+k2.ID+".") {
		t.Errorf("a token issued after the rotation does not name the new key %s: %.20s", k2.ID, after)
	}
	for name, tok := range map[string]string{"before": before, "after": after} {
		if _, err := s.Parse("inst1", tok, now); err != nil {
			t.Errorf("after the rotation, the token issued %s it: %v", name, err)
		}
	}
	r3, _ := r2.Retire(r1.Active())
	if err := keyring.WriteFile(file, r3); err != nil {
		t.Fatal(err)
	}
	if changed, err := keys.Reload(); !changed || err != nil {
		t.Fatalf("reload: %v %v", changed, err)
	}
	if _, err := s.Parse("inst1", before, now); err == nil {
		t.Error("a token of a retired key is accepted")
	}
	if _, err := s.Parse("inst1", after, now); err != nil {
		t.Errorf("a token of the active key after a retirement: %v", err)
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
	a := NewAccounts(keyring.Hold(keyring.Generate()))
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
