package arcql

import (
	"errors"
	"time"
)

// errBadTime is returned by parseTime; callers word their own message.
var errBadTime = errors.New("not an ISO-8601 timestamp")

// parseTime reads the ISO-8601 forms a filter may use for a timestamp: RFC
// 3339 date-time with a zone ("2026-01-01T00:00:00Z", "…+02:00", optional
// fraction) or a bare date ("2026-01-01", midnight UTC). A date-time without
// a zone is refused rather than guessed. The result is in UTC.
func parseTime(s string) (time.Time, error) {
	if len(s) == len(time.DateOnly) {
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return time.Time{}, errBadTime
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errBadTime
	}
	return t.UTC(), nil
}

// canonicalTime is the text Bind stores beside a timestamp literal: RFC 3339
// in UTC with the shortest fraction.
func canonicalTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
