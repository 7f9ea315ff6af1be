package hooks

import (
	"encoding/base64"
	"errors"
	"strings"

	"github.com/corehq/core/store"
)

// SecretPrefix begins every hook secret (Standard Webhooks).
const SecretPrefix = "whsec_"

// Sealer seals and opens secrets (keyring.Keeper, tenant.Sealer).
type Sealer interface {
	Seal(plain []byte, aad string) string
	Open(sealed, aad string) (plain []byte, current bool, err error)
}

// ParseSecret returns the key of a secret: whsec_ followed by the
// standard base64 of 24 to 64 random bytes.
func ParseSecret(s string) ([]byte, error) {
	b64, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return nil, errors.New("the secret must begin with " + SecretPrefix + ", followed by the base64 of 24 to 64 random bytes")
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, errors.New("the secret after " + SecretPrefix + " is not standard base64")
	}
	if len(key) < 24 || len(key) > 64 {
		return nil, errors.New("the secret's key must be 24 to 64 bytes (the base64 after " + SecretPrefix + ")")
	}
	return key, nil
}

// secretAAD binds a sealed secret to its instance: a sealed value copied
// into another instance does not open.
func secretAAD(instanceID string) string { return "core event hook secret\x00" + instanceID }

// SealSecret checks a secret and returns it sealed, as the record keeps it.
func SealSecret(s Sealer, instanceID, secret string) (string, error) {
	key, err := ParseSecret(secret)
	if err != nil {
		return "", err
	}
	return s.Seal(key, secretAAD(instanceID)), nil
}

// OpenSecret opens what SealSecret made.
func OpenSecret(s Sealer, instanceID, sealed string) ([]byte, error) {
	if sealed == "" {
		return nil, errors.New("the hook has no secret")
	}
	key, _, err := s.Open(sealed, secretAAD(instanceID))
	return key, err
}

// Rehome prepares an EventHook record imported from instance from into
// instance to (an export moved: backup.Import), whose secret is sealed
// for from. Where this server's keys open it (the same server, or servers
// sharing their key file) it is sealed again for to; elsewhere nothing in
// the export opens it, so the secret is removed and the hook disabled
// (enabled: false) until a client writes a secret and enables it again,
// as env values are not carried either. Other records are left as they
// are.
func Rehome(s Sealer, from, to string, r *store.Record) {
	sealed, _ := r.Fields["secret"].(string)
	if r.Type != Type || sealed == "" {
		return
	}
	if s != nil {
		if key, _, err := s.Open(sealed, secretAAD(from)); err == nil {
			r.Fields["secret"] = s.Seal(key, secretAAD(to))
			return
		}
	}
	delete(r.Fields, "secret")
	r.Fields["enabled"] = false
}
