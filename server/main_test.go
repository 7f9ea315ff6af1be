package server_test

import (
	"testing"

	"github.com/corehq/core/server/servertest"
)

// The server's end-to-end tests run once per store kind (the embedded
// store, then the MongoDB-wire test server: servertest's stores.go), and
// no test server's log may hold a secret.
func TestMain(m *testing.M) { servertest.MainCheckingLogs(m) }
