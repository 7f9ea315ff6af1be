package gql_test

import (
	"testing"

	"github.com/corehq/core/server/servertest"
)

// TestMain runs the end-to-end tests, then fails the run if any token,
// password or password hash reached a log line of any test server.
func TestMain(m *testing.M) { servertest.MainCheckingLogs(m) }
