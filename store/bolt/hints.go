package bolt

import (
	"strconv"
	"sync"
	"time"
)

// Plan hints. A query with a LIMIT and an index candidate that is not in
// the query's order first counts the candidate's entries up to a bound
// (choosePlan): few entries are collected and sorted, many mean the
// ordered scan is cheaper. When the count overflows, those entries were
// read in vain; a list page and its nextOffsets ask the same question
// on every request. The store remembers the overflow for hintTTL and
// plans the scan at once meanwhile. A stale hint can only choose the
// other correct plan for a second; the hints are bounded by maxHints.
const (
	hintTTL  = time.Second
	maxHints = 4096
)

type planHints struct {
	mu sync.Mutex
	m  map[string]time.Time // key → when the overflow was seen
}

// overflows reports whether key overflowed within hintTTL of now.
func (h *planHints) overflows(key string, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	at, ok := h.m[key]
	return ok && now.Sub(at) < hintTTL
}

// overflowed records that key overflowed at now.
func (h *planHints) overflowed(key string, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= maxHints {
		h.m = map[string]time.Time{}
	}
	h.m[key] = now
}

// hintKey names a candidate of a query: instance, type, index, the entries
// it reads and the window (skip + limit) the count was bounded by.
func hintKey(inst, typ string, cd *candidate, window int) string {
	b := make([]byte, 0, 96)
	b = append(b, inst...)
	b = append(b, 0)
	b = append(b, typ...)
	b = append(b, 0)
	b = append(b, cd.index.Name...)
	b = append(b, 0)
	if cd.rng != nil {
		b = strconv.AppendQuote(b, string(cd.rng.lo))
		b = strconv.AppendQuote(b, string(cd.rng.hi))
	}
	for _, p := range cd.prefixes {
		b = strconv.AppendQuote(b, string(p))
	}
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(window), 10)
	return string(b)
}
