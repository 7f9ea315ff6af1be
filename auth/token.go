package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strings"
)

// NewToken returns a random token of 256 bits, URL-safe base64 without
// padding, and its SHA-256 hash. Only the hash is kept: a token of that
// entropy needs no slow hash.
func NewToken() (token string, hash [32]byte) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("auth: crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	token = base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashToken(token)
}

// HashToken returns the SHA-256 of a token.
func HashToken(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// TokenMatches reports, in constant time, whether token hashes to hash.
func TokenMatches(token string, hash [32]byte) bool {
	h := HashToken(token)
	return subtle.ConstantTimeCompare(h[:], hash[:]) == 1
}

// BearerToken extracts the token from an authorization header value:
// bare, or as "Bearer <token>" (scheme case-insensitive).
func BearerToken(header string) string {
	header = strings.TrimSpace(header)
	if len(header) > 7 && strings.EqualFold(header[:7], "bearer ") {
		return strings.TrimSpace(header[7:])
	}
	return header
}
