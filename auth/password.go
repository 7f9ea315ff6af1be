package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/corehq/core/errcode"
)

// Password length bounds. The minimum counts characters (Unicode code
// points), as NIST SP 800-63B does and as users count: eight letters of
// any script pass and seven do not, though "ééééééé" is fourteen bytes.
// The maximum counts bytes, because it bounds the work of hashing; it is
// checked before hashing so that a huge password cannot make hashing
// expensive.
const (
	MinPasswordChars = 8
	MaxPasswordBytes = 1024
)

// Argon2 holds Argon2id parameters. The defaults are OWASP's: 19 MiB of
// memory, 2 passes, 1 lane.
type Argon2 struct {
	MemoryKiB uint32
	Time      uint32
	Threads   uint8
	SaltLen   int
	KeyLen    uint32
}

// DefaultArgon2 returns OWASP's Argon2id parameters.
func DefaultArgon2() Argon2 {
	return Argon2{MemoryKiB: 19 * 1024, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}
}

// CheckPassword fails with BAD_REQUEST unless the password's length is
// within bounds. The password is otherwise taken as it is, byte for byte:
// no Unicode normalization, no trimming, no truncation.
func CheckPassword(pw string) error {
	switch {
	case len(pw) > MaxPasswordBytes:
		return errcode.New(errcode.BadRequest, "the password is longer than %d bytes", MaxPasswordBytes)
	case utf8.RuneCountInString(pw) < MinPasswordChars:
		return errcode.New(errcode.BadRequest, "the password is shorter than %d characters", MinPasswordChars)
	}
	return nil
}

// Hash returns the PHC string of an Argon2id hash of pw:
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>.
func (a Argon2) Hash(pw string) string {
	salt := make([]byte, a.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		panic("auth: crypto/rand failed: " + err.Error())
	}
	key := argon2.IDKey([]byte(pw), salt, a.Time, a.MemoryKiB, a.Threads, a.KeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, a.MemoryKiB, a.Time, a.Threads,
		enc.EncodeToString(salt), enc.EncodeToString(key))
}

// Verify reports whether pw matches the PHC string, in time independent
// of where they differ, and whether the hash used weaker parameters than
// a and should be replaced.
func (a Argon2) Verify(pw, phc string) (ok, rehash bool) {
	p, salt, key, err := parsePHC(phc)
	if err != nil {
		return false, false
	}
	got := argon2.IDKey([]byte(pw), salt, p.Time, p.MemoryKiB, p.Threads, uint32(len(key)))
	ok = subtle.ConstantTimeCompare(got, key) == 1
	return ok, p.MemoryKiB < a.MemoryKiB || p.Time < a.Time || p.Threads < a.Threads || len(key) < int(a.KeyLen)
}

// parsePHC reads an Argon2id PHC string.
func parsePHC(s string) (Argon2, []byte, []byte, error) {
	var p Argon2
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return p, nil, nil, errors.New("auth: not an argon2id hash")
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Time, &p.Threads); err != nil {
		return p, nil, nil, errors.New("auth: bad argon2id parameters")
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	key, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(key) == 0 || p.Time == 0 || p.Threads == 0 || p.MemoryKiB > 4<<20 {
		return p, nil, nil, errors.New("auth: bad argon2id hash")
	}
	return p, salt, key, nil
}
