package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// sealedPrefix starts every sealed value, so that a value sealed is told
// from one an older version stored in clear.
const sealedPrefix = "sealed1:"

// ErrUnsealable is wrapped by Open's error when a sealed value cannot be
// opened: its key is not in the ring (retired, or another key file), or
// it was changed, or it is opened with other additional data (moved to
// another instance or field).
var ErrUnsealable = errors.New("keyring: the sealed value cannot be opened")

// Sealer encrypts the secrets the service keeps in its store with
// AES-256-GCM, under keys derived from a ring (LabelSecrets). A sealed
// value is "sealed1:<key id>:<base64url(nonce | ciphertext | tag)>"; the
// caller's additional data (for example the instance id and the field)
// binds it to its place, so that it cannot be opened anywhere else. Safe
// for concurrent use.
type Sealer struct {
	active string
	aeads  map[string]cipher.AEAD
}

// Sealer returns the ring's sealer.
func (r *Ring) Sealer() *Sealer {
	s := &Sealer{active: r.active, aeads: map[string]cipher.AEAD{}}
	for id, key := range r.Derive(LabelSecrets) {
		block, err := aes.NewCipher(key)
		if err != nil {
			panic("keyring: AES: " + err.Error()) // a 32-byte key always makes one
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			panic("keyring: GCM: " + err.Error())
		}
		s.aeads[id] = aead
	}
	return s
}

// IsSealed reports whether v has the form of a sealed value.
func IsSealed(v string) bool { return strings.HasPrefix(v, sealedPrefix) }

// Seal encrypts plain under the active key, bound to aad.
func (s *Sealer) Seal(plain []byte, aad string) string {
	aead := s.aeads[s.active]
	out := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		panic("keyring: crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	out = aead.Seal(out, out, plain, []byte(aad))
	return sealedPrefix + s.active + ":" + base64.RawURLEncoding.EncodeToString(out)
}

// Open decrypts a value Seal made with the same aad, with whichever key
// of the ring sealed it. current reports whether that is the active key
// (when not, the caller seals the value again to move it to the active
// key before the old one is retired). A failure wraps ErrUnsealable and
// names the key.
func (s *Sealer) Open(sealed, aad string) (plain []byte, current bool, err error) {
	rest, ok := strings.CutPrefix(sealed, sealedPrefix)
	id, body, found := strings.Cut(rest, ":")
	if !ok || !found {
		return nil, false, fmt.Errorf("%w: not a sealed value", ErrUnsealable)
	}
	aead := s.aeads[id]
	if aead == nil {
		return nil, false, fmt.Errorf("%w: it was sealed with key %q, which the key ring does not hold (retired, or another key file)", ErrUnsealable, id)
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, false, fmt.Errorf("%w: malformed", ErrUnsealable)
	}
	plain, err = aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(aad))
	if err != nil {
		return nil, false, fmt.Errorf("%w: key %s does not open it here (changed, or moved from another place)", ErrUnsealable, id)
	}
	return plain, id == s.active, nil
}
