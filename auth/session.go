package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/corehq/core/keyring"
	"github.com/corehq/core/store"
)

// sessionPrefix starts every session token, so that a session token is
// told from an instance token without any lookup. Tokens of the first
// form ("cs1."), signed with a secret kept in the store, are still told
// apart, and always refused.
const (
	sessionPrefix = "cs2."
	legacyPrefix  = "cs1."
)

// DefaultSessionLifetime is how long a session token lasts when the
// instance does not say.
const DefaultSessionLifetime = 7 * 24 * time.Hour

// Sessions issues and checks session tokens: signed, carrying the
// instance id, the account id, a session id and the issue and expiry
// times. A token is "cs2.<key id>.<claims>.<signature>": it is signed with
// a key derived from the key ring's active key (keyring.LabelSessions)
// and the instance id, so a token is accepted only on the instance that
// issued it, and only while the ring still holds the key it names:
// rotating the ring keeps tokens valid, retiring their key ends them. The
// ring lives outside the store (keyring), so a copy of the store signs
// nothing. Safe for concurrent use.
type Sessions struct {
	keys    *keyring.Keeper
	derived atomic.Pointer[sessionKeys]
}

// sessionKeys are the session sub-keys of one ring, by key id.
type sessionKeys struct {
	ring *keyring.Ring
	keys map[string][]byte
}

// NewSessions returns Sessions signing with the rings keys holds, the one
// it holds at each moment.
func NewSessions(keys *keyring.Keeper) *Sessions { return &Sessions{keys: keys} }

// current returns the sub-keys of the ring in use, deriving them once per
// ring.
func (s *Sessions) current() *sessionKeys {
	r := s.keys.Ring()
	if d := s.derived.Load(); d != nil && d.ring == r {
		return d
	}
	d := &sessionKeys{ring: r, keys: r.Derive(keyring.LabelSessions)}
	s.derived.Store(d)
	return d
}

// Claims are what a session token says.
type Claims struct {
	Instance string `json:"i"`
	Account  string `json:"a"`
	Session  string `json:"s"`
	// IssuedMicros and ExpiresMicros are Unix times in microseconds.
	IssuedMicros  int64 `json:"t"`
	ExpiresMicros int64 `json:"e"`
	// Admin marks a console session (IssueAdmin): it acts as the instance
	// token, for the instance's admin account only, while the instance
	// token it was issued under (TokenTag) is the instance's.
	Admin    bool   `json:"adm,omitempty"`
	TokenTag string `json:"tt,omitempty"`
}

// tokenTag names an instance token in an admin session without saying
// anything of the token: a rotation of the token changes it, which ends
// the admin sessions issued before.
func tokenTag(hash [32]byte) string {
	t := sha256.Sum256(append([]byte("core admin session\x00"), hash[:]...))
	return base64.RawURLEncoding.EncodeToString(t[:12])
}

// ErrBadSession is returned for a token that is malformed, forged, from
// another instance, signed with a key the ring no longer holds, expired
// or revoked.
var ErrBadSession = errors.New("auth: invalid or expired session token")

// instanceKey returns the signing key of an instance under one session
// sub-key.
func instanceKey(key []byte, inst string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("core session key\x00"))
	m.Write([]byte(inst))
	return m.Sum(nil)
}

// sign returns the signature of a token's body.
func sign(key []byte, inst, body string) []byte {
	m := hmac.New(sha256.New, instanceKey(key, inst))
	m.Write([]byte(body))
	return m.Sum(nil)
}

// AdminSessionLifetime is how long an admin session (IssueAdmin) lasts;
// the console asks for a new one before it ends.
const AdminSessionLifetime = 15 * time.Minute

// Issue returns a new session token for an account of an instance, signed
// with the active key.
func (s *Sessions) Issue(inst, account string, now time.Time, lifetime time.Duration) (string, Claims) {
	return s.issue(inst, account, now, lifetime, "")
}

// IssueAdmin returns a new admin session of an instance: a token that acts
// as the instance token (Principal InstanceAdmin) on that instance only,
// for adminAccount (the instance's admin account), for
// AdminSessionLifetime. It is what the admin API gives the console, which
// then needs no instance token. It is signed and checked as every session
// token is (another instance, expiry, a retired key refuse it) and is
// never stored. It ends, too, when the instance's token is rotated.
func (s *Sessions) IssueAdmin(inst Instance, now time.Time) (string, Claims) {
	return s.issue(inst.ID, inst.AdminAccountID, now, AdminSessionLifetime, tokenTag(inst.TokenHash))
}

// issue signs a session; adminTag, when set, makes it an admin session
// bound to the instance token it names.
func (s *Sessions) issue(inst, account string, now time.Time, lifetime time.Duration, adminTag string) (string, Claims) {
	var sid [16]byte // 128 random bits, beside the signature
	if _, err := rand.Read(sid[:]); err != nil {
		panic("auth: crypto/rand failed: " + err.Error())
	}
	c := Claims{
		Instance:      inst,
		Account:       account,
		Session:       base64.RawURLEncoding.EncodeToString(sid[:]),
		IssuedMicros:  now.UnixMicro(),
		ExpiresMicros: now.Add(lifetime).UnixMicro(),
		Admin:         adminTag != "",
		TokenTag:      adminTag,
	}
	d := s.current()
	kid := d.ring.Active()
	payload, _ := json.Marshal(c)
	body := sessionPrefix + kid + "." + base64.RawURLEncoding.EncodeToString(payload)
	return body + "." + base64.RawURLEncoding.EncodeToString(sign(d.keys[kid], inst, body)), c
}

// IsSessionToken reports whether a token has the form of a session token
// (of this version or an older one).
func IsSessionToken(token string) bool {
	return strings.HasPrefix(token, sessionPrefix) || strings.HasPrefix(token, legacyPrefix)
}

// Parse checks a token's key and signature (in constant time), instance
// and expiry, and returns its claims. It does not check revocation.
func (s *Sessions) Parse(inst, token string, now time.Time) (Claims, error) {
	var c Claims
	rest, ok := strings.CutPrefix(token, sessionPrefix)
	kid, rest, found := strings.Cut(rest, ".")
	dot := strings.LastIndexByte(rest, '.')
	if !ok || !found || dot < 0 {
		return c, ErrBadSession
	}
	key := s.current().keys[kid]
	if key == nil {
		return c, ErrBadSession // retired, or never ours
	}
	body, sig := token[:len(token)-len(rest)+dot], rest[dot+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, sign(key, inst, body)) {
		return c, ErrBadSession
	}
	payload, err := base64.RawURLEncoding.DecodeString(rest[:dot])
	if err != nil || json.Unmarshal(payload, &c) != nil {
		return c, ErrBadSession
	}
	if c.Instance != inst || c.Account == "" || now.UnixMicro() >= c.ExpiresMicros {
		return c, ErrBadSession
	}
	return c, nil
}

// Fields of an Account record that session checks use. They are not part
// of the Account type, so no API can read, filter or set them.
const (
	// FieldSessionsAfter holds the Unix time in microseconds before which
	// the account's sessions are revoked.
	FieldSessionsAfter = "sessionsAfter"
	// FieldKeepSession names one session that survives that revocation
	// (the one that changed the password).
	FieldKeepSession = "keepSession"
	// FieldPassword holds the Argon2id PHC string.
	FieldPassword = "password"
)

// Revoked reports whether an account record revokes a session.
func Revoked(account *store.Record, c Claims) bool {
	after := toInt64(account.Fields[FieldSessionsAfter])
	if after == 0 || c.IssuedMicros > after {
		return false
	}
	keep, _ := account.Fields[FieldKeepSession].(string)
	return keep == "" || keep != c.Session
}

// docLegacyKind and docLegacyKey are where versions before the key ring
// kept the session secret, in the store.
const docLegacyKind, docLegacyKey = "service", "session-secret"

// DropStoredSecret removes the session secret an older version kept in the
// store, and reports whether there was one. It is no longer trusted (a
// copy of the store held it): the sessions it signed end.
func DropStoredSecret(ctx context.Context, st store.Store) (bool, error) {
	_, err := st.GetDoc(ctx, docLegacyKind, docLegacyKey)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err == nil {
		err = st.DeleteDoc(ctx, docLegacyKind, docLegacyKey)
	}
	if err != nil {
		return false, fmt.Errorf("auth: removing the session secret an older version stored: %w", err)
	}
	return true, nil
}

// toInt64 reads a stored number, whatever its Go type.
func toInt64(v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	case int:
		return int64(v)
	case int32:
		return int64(v)
	}
	return 0
}
