package keyring

import (
	"bytes"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// SecretLen is the length of a master key: 256 bits.
const SecretLen = 32

// format names the layout of a key file, so that a file of another kind
// (or a later layout) is refused instead of misread.
const format = "core-keyring-1"

// maxKeys bounds the keys of one ring: rotation adds one each time, and
// retiring removes them.
const maxKeys = 64

// Labels of the sub-keys derived from each master key (HKDF-SHA256 info):
// one purpose each, so that no key serves two.
const (
	// LabelSessions derives the key that signs session tokens.
	LabelSessions = "core session signing v1"
	// LabelSecrets derives the AES-256-GCM key of secrets kept in the
	// store (Sealer).
	LabelSecrets = "core secrets at rest v1"
)

// Key is one master key.
type Key struct {
	// ID names the key in the tokens and sealed values made with it:
	// 1 to 32 letters, digits, '-' or '_'.
	ID string `json:"id"`
	// Created is when the key was made (UTC).
	Created time.Time `json:"created"`
	// Secret is the key itself, SecretLen random bytes (base64 in the
	// file).
	Secret []byte `json:"secret"`
}

// Ring is a set of master keys, one of them active: new session tokens
// and new sealed values use the active key; the others still verify and
// open what was made with them until they are retired (removed). A Ring is
// never changed once made: Rotate and Retire return new ones, so a ring
// may be shared between goroutines.
type Ring struct {
	active string
	keys   []Key // oldest first
}

// ErrInvalid is wrapped by every error about a key file's content.
var ErrInvalid = errors.New("keyring: invalid key file")

// Generate returns a new ring of one key, active.
func Generate() *Ring {
	k := newKey(nil)
	return &Ring{active: k.ID, keys: []Key{k}}
}

// newKey makes a key whose id none of taken has.
func newKey(taken []Key) Key {
	for {
		var id [4]byte
		k := Key{Created: time.Now().UTC().Truncate(time.Second), Secret: make([]byte, SecretLen)}
		if _, err := rand.Read(id[:]); err != nil {
			panic("keyring: crypto/rand failed: " + err.Error()) // never happens on supported platforms
		}
		if _, err := rand.Read(k.Secret); err != nil {
			panic("keyring: crypto/rand failed: " + err.Error())
		}
		k.ID = hex.EncodeToString(id[:])
		if !slices.ContainsFunc(taken, func(o Key) bool { return o.ID == k.ID }) {
			return k
		}
	}
}

// Active returns the id of the active key.
func (r *Ring) Active() string { return r.active }

// Keys returns the ring's keys, oldest first. The caller must not change
// them.
func (r *Ring) Keys() []Key { return r.keys }

// Rotate returns a ring with a new active key added; the keys of r stay
// and keep verifying until retired. It is Add and Activate at once.
func (r *Ring) Rotate() (*Ring, Key, error) {
	next, k, err := r.Add()
	if err != nil {
		return nil, Key{}, err
	}
	next.active = k.ID
	return next, k, nil
}

// Add returns a ring with a new key that is not active yet: it verifies
// and opens, but signs and seals nothing until Activate. Processes that
// read a shared key file at different moments thus all know a key before
// any of them signs with it.
func (r *Ring) Add() (*Ring, Key, error) {
	if len(r.keys) >= maxKeys {
		return nil, Key{}, fmt.Errorf("keyring: the ring holds %d keys already: retire old ones first (cored keys retire ID)", len(r.keys))
	}
	k := newKey(r.keys)
	return &Ring{active: r.active, keys: append(slices.Clip(r.keys), k)}, k, nil
}

// Activate returns a ring whose active key is id, one of its keys.
func (r *Ring) Activate(id string) (*Ring, error) {
	if !slices.ContainsFunc(r.keys, func(k Key) bool { return k.ID == id }) {
		return nil, fmt.Errorf("keyring: no key %q in the ring (it holds %s)", id, strings.Join(r.ids(), ", "))
	}
	return &Ring{active: id, keys: r.keys}, nil
}

// Retire returns a ring without key id: what was signed or sealed with it
// no longer verifies or opens. The active key cannot be retired (rotate
// first).
func (r *Ring) Retire(id string) (*Ring, error) {
	i := slices.IndexFunc(r.keys, func(k Key) bool { return k.ID == id })
	switch {
	case i < 0:
		return nil, fmt.Errorf("keyring: no key %q in the ring (it holds %s)", id, strings.Join(r.ids(), ", "))
	case id == r.active:
		return nil, fmt.Errorf("keyring: key %s is the active key: rotate first (cored keys rotate), then retire it", id)
	}
	return &Ring{active: r.active, keys: slices.Delete(slices.Clone(r.keys), i, i+1)}, nil
}

func (r *Ring) ids() []string {
	ids := make([]string, len(r.keys))
	for i, k := range r.keys {
		ids[i] = k.ID
	}
	return ids
}

// Derive returns, for each key of the ring by id, the 32-byte sub-key
// HKDF-SHA256 derives from it for the purpose label (LabelSessions,
// LabelSecrets).
func (r *Ring) Derive(label string) map[string][]byte {
	out := make(map[string][]byte, len(r.keys))
	for _, k := range r.keys {
		sub, err := hkdf.Key(sha256.New, k.Secret, nil, label, 32)
		if err != nil {
			panic("keyring: HKDF: " + err.Error()) // only for lengths beyond 255 blocks
		}
		out[k.ID] = sub
	}
	return out
}

// fileRing is a ring as its file holds it.
type fileRing struct {
	Format string `json:"format"`
	Active string `json:"active"`
	Keys   []Key  `json:"keys"`
}

// Parse reads a key file's content. Every problem is an error wrapping
// ErrInvalid that names it.
func Parse(data []byte) (*Ring, error) {
	var f fileRing
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: not a JSON key ring (%v)", ErrInvalid, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the key ring", ErrInvalid)
	}
	if f.Format != format {
		return nil, fmt.Errorf("%w: format is %q, want %q", ErrInvalid, f.Format, format)
	}
	if len(f.Keys) == 0 || len(f.Keys) > maxKeys {
		return nil, fmt.Errorf("%w: it holds %d keys, want 1 to %d", ErrInvalid, len(f.Keys), maxKeys)
	}
	seen := map[string]bool{}
	for _, k := range f.Keys {
		if !validID(k.ID) {
			return nil, fmt.Errorf("%w: key id %q: 1 to 32 letters, digits, '-' or '_'", ErrInvalid, k.ID)
		}
		if seen[k.ID] {
			return nil, fmt.Errorf("%w: key id %s appears twice", ErrInvalid, k.ID)
		}
		seen[k.ID] = true
		if len(k.Secret) != SecretLen {
			return nil, fmt.Errorf("%w: key %s has %d bytes, want %d", ErrInvalid, k.ID, len(k.Secret), SecretLen)
		}
	}
	if !seen[f.Active] {
		return nil, fmt.Errorf("%w: the active key %q is not among its keys", ErrInvalid, f.Active)
	}
	return &Ring{active: f.Active, keys: f.Keys}, nil
}

// Marshal returns the ring as its file holds it.
func (r *Ring) Marshal() []byte {
	b, err := json.MarshalIndent(fileRing{Format: format, Active: r.active, Keys: r.keys}, "", "  ")
	if err != nil {
		panic("keyring: encoding a ring: " + err.Error()) // plain strings, times and bytes
	}
	return append(b, '\n')
}

// validID reports whether id may name a key: it appears in tokens and
// sealed values between separators ('.' and ':').
func validID(id string) bool {
	if id == "" || len(id) > 32 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
