package auth

import (
	"os"
	"testing"

	"github.com/corehq/core/store/mongo/mongotest"
)

// TestMain stops the MongoDB-wire test server the tests started.
func TestMain(m *testing.M) { os.Exit(mongotest.Main(m)) }
