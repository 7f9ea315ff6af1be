package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
)

// One-time codes: password reset codes and e-mail verification tokens.
// A code is 26 base32 characters from the system's random source (130
// bits: crypto/rand.Text); the store keeps only its SHA-256 (a code that
// cannot be guessed needs no slow hash), with what it stands for and its
// expiry, under its purpose. Redeeming it is single-use across processes:
// the first to create its "used" document (store.CreateDoc) wins; the
// code's document is then removed.
const (
	docCode     = "code"      // key: purpose/instance/sha256 hex
	docCodeUsed = "code-used" // key: the same
)

// The purposes of codes.
const (
	PurposeReset  = "password-reset"
	PurposeVerify = "email-verification"
)

// DefaultResetLifetime is how long a reset code stays valid;
// DefaultVerifyLifetime a verification link.
const (
	DefaultResetLifetime  = 30 * time.Minute
	DefaultVerifyLifetime = 24 * time.Hour
)

// Code is what a one-time code stands for.
type Code struct {
	Account string `json:"account"`
	// Email and RedirectTo: for a verification, the address it verifies
	// and where the link leads after.
	Email      string `json:"email,omitempty"`
	RedirectTo string `json:"redirectTo,omitempty"`
	// Change: the verified address replaces the account's addresses.
	Change  bool      `json:"change,omitempty"`
	Expires time.Time `json:"expires"`
}

func codeKey(purpose, inst, code string) string {
	sum := sha256.Sum256([]byte(code))
	return purpose + "/" + inst + "/" + hex.EncodeToString(sum[:])
}

// IssueCode makes a code for purpose standing for c, valid for lifetime
// from now, and returns it (the store keeps only its hash).
func IssueCode(ctx context.Context, st store.Store, purpose, inst string, c Code, now time.Time, lifetime time.Duration) (string, error) {
	code := rand.Text()
	c.Expires = now.Add(lifetime).UTC()
	raw, _ := json.Marshal(c)
	if err := st.PutDoc(ctx, docCode, codeKey(purpose, inst, code), raw); err != nil {
		return "", fmt.Errorf("auth: storing a %s code: %w", purpose, err)
	}
	return code, nil
}

// ErrResetCode is the one answer to a reset code that is wrong, used or
// expired; ErrVerifyToken a verification link's.
var (
	ErrResetCode   = errcode.New(errcode.BadRequest, "the reset code is wrong, used or expired: ask for a new one")
	ErrVerifyToken = errcode.New(errcode.BadRequest, "the verification link is wrong, used or expired: ask for a new one")
)

// RedeemCode uses a code once and returns what it stands for; invalid
// when it is wrong, used or expired.
func RedeemCode(ctx context.Context, st store.Store, purpose, inst, code string, now time.Time, invalid error) (Code, error) {
	var c Code
	if code == "" || len(code) > 64 {
		return c, invalid
	}
	key := codeKey(purpose, inst, code)
	raw, err := st.GetDoc(ctx, docCode, key)
	if errors.Is(err, store.ErrNotFound) {
		return c, invalid
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(raw, &c); err != nil || !now.Before(c.Expires) {
		return c, invalid
	}
	mine := []byte(rand.Text())
	got, err := st.CreateDoc(ctx, docCodeUsed, key, mine)
	if err != nil {
		return c, err
	}
	if string(got) != string(mine) {
		return c, invalid
	}
	if err := st.DeleteDoc(ctx, docCode, key); err != nil {
		return c, err
	}
	return c, nil
}
