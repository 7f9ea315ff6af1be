package fn

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestFrameCodec: call and done frames come back as they were sent, and
// a cut frame is an error, never a panic or a half-read call.
func TestFrameCodec(t *testing.T) {
	call := callFrame{App: "shop", Name: "verify", Version: "v1", SHA256: "ab12", Input: []byte(`{"args":{"a":"é"}}`),
		Fetch:   FetchPolicy{Enabled: true, AllowHosts: []string{"api.example.com", "*.example.org"}},
		GraphQL: true, Timeout: 5 * time.Second, Memory: 64 << 20}
	var gotCall callFrame
	if err := gotCall.decode(call.encode()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(call, gotCall); diff != "" {
		t.Errorf("call frame (-sent +read):\n%s", diff)
	}

	at := time.Date(2026, 11, 25, 12, 0, 0, 123, time.UTC)
	for _, done := range []doneFrame{
		{Result: []byte(`{"ok":true}`), Duration: time.Millisecond},
		{Err: &wireError{Kind: "memory", Name: "hoard", Version: "v1", Limit: 64 << 20}, Duration: 2 * time.Second,
			Log: []LogEntry{{Time: at, Level: "runtime", Function: "hoard@v1", Call: "c1", Message: "stopped"}}},
		{Err: &wireError{Kind: "timeout", Name: "loop", Version: "v2", After: 5 * time.Second}, Retire: true},
	} {
		var got doneFrame
		if err := got.decode(done.encode()); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(done, got); diff != "" {
			t.Errorf("done frame (-sent +read):\n%s", diff)
		}
		b := done.encode()
		for n := range len(b) {
			var cut doneFrame
			if err := cut.decode(b[:n]); err == nil {
				t.Errorf("a done frame cut to %d of %d bytes decoded without an error", n, len(b))
			}
		}
	}
	if err := new(callFrame).decode([]byte{0xff, 0xff, 0xff, 0xff, 0xff}); err == nil {
		t.Error("a call frame with an impossible length decoded")
	}
}
