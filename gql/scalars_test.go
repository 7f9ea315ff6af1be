package gql

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestFormatTime(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	cases := []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(2026, 3, 4, 5, 6, 7, 8_900_000, time.FixedZone("x", -7*3600)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for i := 0; i < 1000; i++ {
		cases = append(cases, time.Unix(r.Int64N(1<<36)-1<<35, r.Int64N(1e9)))
	}
	for _, c := range cases {
		if got, want := formatTime(c), c.UTC().Format(timeLayout); got != want {
			t.Errorf("formatTime(%v) = %s, want %s", c, got, want)
		}
	}
}
