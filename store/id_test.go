package store

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// decodeULIDTime reads the millisecond time of a ULID (test helper).
func decodeULIDTime(t *testing.T, id string) time.Time {
	t.Helper()
	var ms uint64
	for i := 0; i < 10; i++ {
		d := strings.IndexByte(crockford, id[i])
		if d < 0 {
			t.Fatalf("id %q: %q is not a Crockford digit", id, id[i])
		}
		ms = ms<<5 | uint64(d)
	}
	return time.UnixMilli(int64(ms))
}

func TestNewIDFormat(t *testing.T) {
	before := time.Now().Truncate(time.Millisecond)
	id := NewID()
	after := time.Now()
	if len(id) != IDLen {
		t.Fatalf("len(%q) = %d, want %d", id, len(id), IDLen)
	}
	for i, c := range id {
		if !strings.ContainsRune(crockford, c) {
			t.Fatalf("id %q: character %d %q is not in the Crockford alphabet", id, i, c)
		}
	}
	if id[0] > '7' {
		t.Errorf("id %q: first digit %q holds more than 3 bits", id, id[0])
	}
	if ts := decodeULIDTime(t, id); ts.Before(before) || ts.After(after) {
		t.Errorf("id %q holds time %v, want within [%v, %v]", id, ts, before, after)
	}
}

func TestEncodeULIDKnownValues(t *testing.T) {
	tests := []struct {
		name string
		ms   uint64
		rnd  [10]byte
		want string
	}{
		{"zero", 0, [10]byte{}, "00000000000000000000000000"},
		{"max", maxULIDTime, [10]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"},
		{"one", 1, [10]byte{9: 1}, "00000000010000000000000001"},
		// The example of the ULID specification's time component.
		{"spec time", 1469918176385, [10]byte{}, "01ARYZ6S410000000000000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b [IDLen]byte
			encodeULID(&b, tt.ms, &tt.rnd)
			if got := string(b[:]); got != tt.want {
				t.Errorf("encodeULID(%d, %x) = %s, want %s", tt.ms, tt.rnd, got, tt.want)
			}
		})
	}
}

func TestNewIDMonotonic(t *testing.T) {
	prev := NewID()
	for i := 0; i < 100000; i++ {
		id := NewID()
		if id <= prev {
			t.Fatalf("id %d: %s is not after %s", i, id, prev)
		}
		prev = id
	}
}

func TestIDGenSameMillisecondAndClockStepBack(t *testing.T) {
	zero := func(b []byte) (int, error) { clear(b); return len(b), nil }
	g := &idGen{read: zero}
	t0 := time.UnixMilli(1_700_000_000_000)
	tests := []struct {
		name string
		now  time.Time
	}{
		{"first", t0},
		{"same millisecond", t0},
		{"same millisecond again", t0.Add(500 * time.Microsecond)},
		{"clock stepped back", t0.Add(-time.Second)},
		{"later", t0.Add(time.Millisecond)},
	}
	prev := ""
	for _, tt := range tests {
		id := g.next(tt.now)
		if id <= prev {
			t.Errorf("%s: %s is not after %s", tt.name, id, prev)
		}
		prev = id
	}
}

func TestIDGenOverflowMovesToNextMillisecond(t *testing.T) {
	ones := func(b []byte) (int, error) {
		for i := range b {
			b[i] = 0xff
		}
		return len(b), nil
	}
	g := &idGen{read: ones}
	now := time.UnixMilli(1_700_000_000_000)
	a := g.next(now)
	b := g.next(now)
	if b <= a {
		t.Fatalf("%s is not after %s", b, a)
	}
	if got, want := decodeULIDTime(t, b), now.Add(time.Millisecond); !got.Equal(want) {
		t.Errorf("after overflow the time is %v, want %v", got, want)
	}
}

func TestNewIDConcurrentUnique(t *testing.T) {
	const workers, each = 16, 5000
	ids := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			list := make([]string, each)
			for i := range list {
				list[i] = NewID()
			}
			ids[w] = list
		}()
	}
	wg.Wait()
	seen := make(map[string]bool, workers*each)
	for w, list := range ids {
		for i, id := range list {
			if seen[id] {
				t.Fatalf("duplicate id %s", id)
			}
			seen[id] = true
			if i > 0 && id <= list[i-1] {
				t.Fatalf("worker %d: %s is not after %s", w, id, list[i-1])
			}
		}
	}
}

func BenchmarkNewID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		NewID()
	}
}
