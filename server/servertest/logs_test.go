package servertest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLeaks(t *testing.T) {
	t.Parallel()
	secrets := map[string]bool{"s3cret-token-value": true, "hunter2hunter2": true}
	log := []byte(`{"msg":"request","path":"/graphql"}` + "\n" + `{"msg":"oops","token":"s3cret-token-value","h":"$argon2id$v=19$..."}`)
	want := []string{"a value shaped like $argon2id$…", "s3cret-token-value"}
	if diff := cmp.Diff(want, Leaks(log, secrets)); diff != "" {
		t.Errorf("Leaks (-want +got):\n%s", diff)
	}
	if got := Leaks([]byte(`{"msg":"request"}`), secrets); len(got) != 0 {
		t.Errorf("Leaks of a clean log = %v", got)
	}
}
