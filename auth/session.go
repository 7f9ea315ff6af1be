package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/corehq/core/store"
)

// sessionPrefix starts every session token, so that a session token is
// told from an instance token without any lookup.
const sessionPrefix = "cs1."

// DefaultSessionLifetime is how long a session token lasts when the
// instance does not say.
const DefaultSessionLifetime = 7 * 24 * time.Hour

// Sessions issues and checks session tokens: signed, carrying the
// instance id, the account id, a session id and the issue and expiry
// times. Each instance signs with its own key, derived from the
// service's secret and the instance id, so a token is accepted only on
// the instance that issued it.
type Sessions struct {
	secret []byte
}

// NewSessions returns Sessions signing with keys derived from secret.
func NewSessions(secret []byte) *Sessions { return &Sessions{secret: secret} }

// Claims are what a session token says.
type Claims struct {
	Instance string `json:"i"`
	Account  string `json:"a"`
	Session  string `json:"s"`
	// IssuedMicros and ExpiresMicros are Unix times in microseconds.
	IssuedMicros  int64 `json:"t"`
	ExpiresMicros int64 `json:"e"`
}

// ErrBadSession is returned for a token that is malformed, forged, from
// another instance, expired or revoked.
var ErrBadSession = errors.New("auth: invalid or expired session token")

// key returns the signing key of an instance.
func (s *Sessions) key(inst string) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("core session key\x00"))
	m.Write([]byte(inst))
	return m.Sum(nil)
}

// Issue returns a new session token for an account of an instance.
func (s *Sessions) Issue(inst, account string, now time.Time, lifetime time.Duration) (string, Claims) {
	var sid [12]byte
	if _, err := rand.Read(sid[:]); err != nil {
		panic("auth: crypto/rand failed: " + err.Error())
	}
	c := Claims{
		Instance:      inst,
		Account:       account,
		Session:       base64.RawURLEncoding.EncodeToString(sid[:]),
		IssuedMicros:  now.UnixMicro(),
		ExpiresMicros: now.Add(lifetime).UnixMicro(),
	}
	payload, _ := json.Marshal(c)
	body := sessionPrefix + base64.RawURLEncoding.EncodeToString(payload)
	m := hmac.New(sha256.New, s.key(inst))
	m.Write([]byte(body))
	return body + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil)), c
}

// IsSessionToken reports whether a token has the form of a session token.
func IsSessionToken(token string) bool { return strings.HasPrefix(token, sessionPrefix) }

// Parse checks a token's signature (in constant time), instance and
// expiry, and returns its claims. It does not check revocation.
func (s *Sessions) Parse(inst, token string, now time.Time) (Claims, error) {
	var c Claims
	dot := strings.LastIndexByte(token, '.')
	if !IsSessionToken(token) || dot <= len(sessionPrefix) {
		return c, ErrBadSession
	}
	body, sig := token[:dot], token[dot+1:]
	want := hmac.New(sha256.New, s.key(inst))
	want.Write([]byte(body))
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, want.Sum(nil)) {
		return c, ErrBadSession
	}
	payload, err := base64.RawURLEncoding.DecodeString(body[len(sessionPrefix):])
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

// LoadSecret returns the service's session secret, kept as a store
// document so every process of a deployment shares it; it is generated on
// first use.
func LoadSecret(ctx context.Context, st store.Store) ([]byte, error) {
	doc, err := st.GetDoc(ctx, "service", "session-secret")
	if err == nil && len(doc) >= 32 {
		return doc, nil
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	// Create if absent, and use what is stored: processes starting at
	// once on an empty database agree on the first secret written.
	stored, err := st.CreateDoc(ctx, "service", "session-secret", secret)
	if err != nil {
		return nil, err
	}
	if len(stored) < 32 {
		return nil, errors.New("auth: the stored session secret is shorter than 32 bytes")
	}
	return stored, nil
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
