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

// Password reset codes. A code is 26 base32 characters from the system's
// random source (130 bits: crypto/rand.Text); the store keeps only its
// SHA-256 (a code that cannot be guessed needs no slow hash), with the
// account it resets and its expiry. Redeeming it is single-use across
// processes: the first to create its "used" document (store.CreateDoc)
// wins; the code's document is then removed.
const (
	docResetCode = "password-reset"      // key: instance/sha256 hex
	docResetUsed = "password-reset-used" // key: the same
)

// DefaultResetLifetime is how long a reset code stays valid.
const DefaultResetLifetime = 30 * time.Minute

// resetCode is a reset code's document.
type resetCode struct {
	Account string    `json:"account"`
	Expires time.Time `json:"expires"`
}

func resetKey(inst, code string) string {
	sum := sha256.Sum256([]byte(code))
	return inst + "/" + hex.EncodeToString(sum[:])
}

// IssueResetCode makes a reset code for the account, valid for lifetime
// from now, and returns it (the store keeps only its hash).
func IssueResetCode(ctx context.Context, st store.Store, inst, account string, now time.Time, lifetime time.Duration) (string, error) {
	code := rand.Text()
	raw, _ := json.Marshal(resetCode{Account: account, Expires: now.Add(lifetime).UTC()})
	if err := st.PutDoc(ctx, docResetCode, resetKey(inst, code), raw); err != nil {
		return "", fmt.Errorf("auth: storing a reset code: %w", err)
	}
	return code, nil
}

// ErrResetCode is the one answer to a code that is wrong, used or expired.
var ErrResetCode = errcode.New(errcode.BadRequest, "the reset code is wrong, used or expired: ask for a new one")

// RedeemResetCode uses a code once and returns the account it resets;
// ErrResetCode when it is wrong, used or expired.
func RedeemResetCode(ctx context.Context, st store.Store, inst, code string, now time.Time) (string, error) {
	if code == "" || len(code) > 64 {
		return "", ErrResetCode
	}
	key := resetKey(inst, code)
	raw, err := st.GetDoc(ctx, docResetCode, key)
	if errors.Is(err, store.ErrNotFound) {
		return "", ErrResetCode
	}
	if err != nil {
		return "", err
	}
	var rc resetCode
	if err := json.Unmarshal(raw, &rc); err != nil || !now.Before(rc.Expires) {
		return "", ErrResetCode
	}
	mine := []byte(rand.Text())
	got, err := st.CreateDoc(ctx, docResetUsed, key, mine)
	if err != nil {
		return "", err
	}
	if string(got) != string(mine) {
		return "", ErrResetCode
	}
	if err := st.DeleteDoc(ctx, docResetCode, key); err != nil {
		return "", err
	}
	return rc.Account, nil
}
