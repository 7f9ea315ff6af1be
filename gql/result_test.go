package gql

import (
	"encoding/json"
	"testing"
)

// TestResultMember reads members of an encoded result and of a decoded
// one alike.
func TestResultMember(t *testing.T) {
	data := `{"find":{"pageInfo":{"hasNextPage":false},"edges":[{"cursor":"b1","node":{"meta":{"edges":[]}}}],"empty":[]},"n":3}`
	body := `{"data":` + data
	encoded := &Result{body: []byte(body), dataStart: len(`{"data":`), dataEnd: len(body)}
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatal(err)
	}
	decoded := &Result{Data: v}
	for _, tc := range []struct {
		keys []string
		want string
	}{
		{[]string{"find", "edges"}, `[{"cursor":"b1","node":{"meta":{"edges":[]}}}]`},
		{[]string{"find", "empty"}, `[]`},
		{[]string{"find", "pageInfo", "hasNextPage"}, `false`},
		{[]string{"n"}, `3`},
		{[]string{"find", "missing"}, ``},
		{[]string{"n", "below a number"}, ``},
		{[]string{"missing", "edges"}, ``},
	} {
		for name, r := range map[string]*Result{"encoded": encoded, "decoded": decoded} {
			if got := string(r.Member(tc.keys...)); got != tc.want {
				t.Errorf("%s: Member(%q) = %s, want %s", name, tc.keys, got, tc.want)
			}
		}
	}
	if got := (&Result{}).Member("find"); got != nil {
		t.Errorf("Member of a result without data = %s, want nil", got)
	}
}
