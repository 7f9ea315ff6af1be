package gql

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
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
	for _, tc := range []struct {
		keys []string
		want bool
	}{
		{[]string{"find", "edges"}, true},
		{[]string{"find", "empty"}, false},
		{[]string{"find", "pageInfo"}, false}, // an object
		{[]string{"n"}, false},
		{[]string{"find", "missing"}, false},
		{[]string{"missing", "edges"}, false},
	} {
		for name, r := range map[string]*Result{"encoded": encoded, "decoded": decoded} {
			if got := r.HasItems(tc.keys...); got != tc.want {
				t.Errorf("%s: HasItems(%q) = %v, want %v", name, tc.keys, got, tc.want)
			}
		}
	}
	spaced := `{"data":{"find":{"edges":[ ]}}}`
	if (&Result{body: []byte(spaced), dataStart: 8, dataEnd: len(spaced) - 1}).HasItems("find", "edges") {
		t.Error(`HasItems of "[ ]" = true, want false`)
	}
}

// FuzzResultMember checks member against encoding/json on any valid JSON
// object: the member found decodes to the value the object holds.
func FuzzResultMember(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"]}\"x"},[]],"edges":[{"c":null}],"z":true}`), "edges")
	f.Add([]byte(` { "k" : "v\\"" , "n" : -1.5e3 } `), "n")
	f.Add([]byte(`{"a":{},"a2":[]}`), "a2")
	f.Fuzz(func(t *testing.T, obj []byte, key string) {
		var m map[string]any
		if json.Unmarshal(obj, &m) != nil || !json.Valid(obj) {
			return
		}
		var raw map[string]json.RawMessage
		if json.Unmarshal(obj, &raw) != nil {
			return
		}
		got := member(obj, key)
		want, ok := m[key]
		// A key that needs escaping in JSON, or that stands twice, is
		// out of scope: the executor writes GraphQL names once each.
		if !ok || !json.Valid([]byte(`"`+key+`"`)) || strings.ContainsAny(key, `\"`) || bytes.Count(obj, []byte(`"`+key+`"`)) != 1 {
			return
		}
		var gotV any
		if err := json.Unmarshal(got, &gotV); err != nil {
			t.Fatalf("member(%s, %q) = %q: %v", obj, key, got, err)
		}
		if !reflect.DeepEqual(gotV, want) {
			t.Fatalf("member(%s, %q) = %s, want %v", obj, key, got, want)
		}
	})
}

// BenchmarkRecordFound is the REST record lookup's check of a GET answer
// (one book with its core fields): is find.edges a list with an item?
func BenchmarkRecordFound(b *testing.B) {
	node := `{"title":"Book 17","authorid":3,"price":55.5,"core":{"id":"b17","type":"Book","createdAt":"2026-11-25T17:04:15.123Z","updatedAt":"2026-11-25T17:04:15.123Z","createdBy":"","instanceId":"bench.test","trashed":false,"trashedAt":null,"version":1,"impl":null,"owner":null,"readers":[],"writers":[]}}`
	data := `{"find":{"edges":[{"cursor":"YjE3","node":` + node + `}],"pageInfo":{"hasNextPage":false,"hasPreviousPage":false,"startCursor":"YjE3","endCursor":"YjE3"}}}`
	body := `{"data":` + data + `}`
	r := &Result{body: []byte(body), dataStart: 8, dataEnd: len(body) - 1}
	for b.Loop() {
		if !r.HasItems("find", "edges") {
			b.Fatal("no items")
		}
	}
}
