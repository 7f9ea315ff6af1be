package store

import (
	"crypto/rand"
	"sync"
	"time"
)

// crockford is the ULID alphabet: Crockford's base32, without I, L, O, U.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// IDLen is the length of an id made by NewID.
const IDLen = 26

// NewID returns a new record id: a ULID, 26 characters of Crockford base32
// holding a 48-bit Unix time in milliseconds and 80 random bits from
// crypto/rand. Within one process ids are strictly increasing, even within
// one millisecond (the random part is incremented) and if the clock steps
// back (the last time is kept), so byte order is creation order. Safe for
// concurrent use.
func NewID() string {
	return defaultIDs.next(time.Now())
}

// defaultIDs is the process-wide generator. It is the one global of the
// package: monotonicity is a property of the process, so it must be shared.
var defaultIDs = &idGen{read: rand.Read}

// idGen makes monotonic ULIDs. read supplies random bytes (crypto/rand,
// replaceable in tests).
type idGen struct {
	mu     sync.Mutex
	read   func([]byte) (int, error)
	lastMs uint64
	rnd    [10]byte // the random part of the last id, big-endian
}

// maxULIDTime is the largest millisecond time a ULID can hold (48 bits).
const maxULIDTime = 1<<48 - 1

func (g *idGen) next(now time.Time) string {
	ms := uint64(now.UnixMilli())
	g.mu.Lock()
	defer g.mu.Unlock()
	if ms > g.lastMs {
		g.lastMs = ms
		g.fresh()
	} else if !increment(&g.rnd) {
		// 2^80 ids in one millisecond: move to the next one rather than
		// repeat an id or go backwards.
		g.lastMs++
		g.fresh()
	}
	if g.lastMs > maxULIDTime {
		panic("store: clock beyond the ULID time range (year 10889)")
	}
	var b [IDLen]byte
	encodeULID(&b, g.lastMs, &g.rnd)
	return string(b[:])
}

// fresh draws new random bits. crypto/rand.Read does not fail on supported
// platforms (it panics rather than return a weak value since Go 1.24); the
// error is checked anyway for a replaced reader.
func (g *idGen) fresh() {
	if _, err := g.read(g.rnd[:]); err != nil {
		panic("store: reading random bytes: " + err.Error())
	}
}

// increment adds one to the 80-bit big-endian number; false on overflow.
func increment(r *[10]byte) bool {
	for i := len(r) - 1; i >= 0; i-- {
		r[i]++
		if r[i] != 0 {
			return true
		}
	}
	return false
}

// encodeULID writes the 128 bits (48 time, 80 random) as 26 base32 digits,
// most significant first; the first digit carries only 3 bits.
func encodeULID(dst *[IDLen]byte, ms uint64, rnd *[10]byte) {
	// Time: 48 bits in 10 digits (the first digit holds 3 bits, then 9×5 = 45).
	for i := 9; i >= 0; i-- {
		dst[i] = crockford[ms&31]
		ms >>= 5
	}
	// Randomness: 80 bits in 16 digits, as two 40-bit halves of 8 digits.
	hi := uint64(rnd[0])<<32 | uint64(rnd[1])<<24 | uint64(rnd[2])<<16 | uint64(rnd[3])<<8 | uint64(rnd[4])
	lo := uint64(rnd[5])<<32 | uint64(rnd[6])<<24 | uint64(rnd[7])<<16 | uint64(rnd[8])<<8 | uint64(rnd[9])
	for i := 17; i >= 10; i-- {
		dst[i] = crockford[hi&31]
		hi >>= 5
	}
	for i := 25; i >= 18; i-- {
		dst[i] = crockford[lo&31]
		lo >>= 5
	}
}
