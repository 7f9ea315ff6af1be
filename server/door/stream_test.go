package door_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/corehq/core/server/door"
)

// TestStreamContext: an event stream runs on the context recorded before
// the request's time-out, and a request without one on its own.
func TestStreamContext(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodPost, "/graphql", nil)
	if door.StreamContext(r) != r.Context() {
		t.Error("a request with no stream context: want its own")
	}
	unbounded := context.WithValue(context.Background(), struct{ k string }{"k"}, "unbounded")
	bounded, cancel := context.WithCancel(r.Context())
	cancel()
	r = r.WithContext(door.WithStreamContext(bounded, unbounded))
	if got := door.StreamContext(r); got != unbounded || got.Err() != nil {
		t.Errorf("StreamContext = %v (err %v), want the unbounded context", got, got.Err())
	}
}
