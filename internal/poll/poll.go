// Package poll waits in tests for a condition to come to hold: a second
// server learning of an instance, a worker's progress, a receiver's
// posts. What a test asserts with it is that the condition holds, never
// how soon: the limit is a guard against a hang, generous enough for a
// machine whose cores are busy with other work.
package poll

import (
	"testing"
	"time"
)

// Limit is how long Until waits before it fails the test.
const Limit = 2 * time.Minute

// Until calls cond every 20 ms until it holds, failing tb (naming what it
// waited for) once Limit has passed.
func Until(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	Within(tb, Limit, what, cond, nil)
}

// UntilShowing is Until whose failure also says what state describes
// then (a receiver's posts, say).
func UntilShowing(tb testing.TB, what string, cond func() bool, state func() string) {
	tb.Helper()
	Within(tb, Limit, what, cond, state)
}

// Within is Until with a limit of its own, for a condition that takes
// minutes on the real clock (a schedule's third tick); state, when not
// nil, describes what there was at the failure.
func Within(tb testing.TB, limit time.Duration, what string, cond func() bool, state func() string) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			if state != nil {
				tb.Fatalf("waited %v for %s; %s", limit, what, state())
			}
			tb.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond) // polling the condition, not timing it
	}
}
