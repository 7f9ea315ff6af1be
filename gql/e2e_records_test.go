package gql_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const upsertDoc = `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id created updated createdBy app release instance instanceId publisherRealm publisherApp publisherRelease } }`

func TestUpsertNestedAndReadBack(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	d := c.data(upsertDoc, map[string]any{"v": map[string]any{
		"Author": []any{map[string]any{
			"core":     map[string]any{"id": "a1"},
			"name":     "Sudha Murty",
			"age":      70,
			"booklist": []any{map[string]any{"core": map[string]any{"id": "b1"}, "title": "Wise and Otherwise", "price": 5.99}, map[string]any{"title": "Gently Falls the Bakula", "price": 7.5}},
			"bestbook": map[string]any{"core": map[string]any{"id": "b1"}},
		}},
	}})
	up, _ := d["upsert"].([]any)
	if len(up) != 1 {
		t.Fatalf("upsert answered %d entries, want 1 per top-level record: %s", len(up), dump(d))
	}
	meta := up[0].(map[string]any)
	if meta["id"] != "a1" || meta["created"] == nil || meta["app"] != "bookstore" || meta["release"] != "v1" ||
		meta["instance"] != "books.test" || meta["publisherRealm"] == nil || meta["publisherApp"] != "bookstore" ||
		meta["publisherRelease"] != "v1" || meta["instanceId"] == nil || meta["createdBy"] == nil {
		t.Errorf("upsert metadata = %s", dump(meta))
	}

	read := `query($id: String!) { get(type: Author, id: $id) { ... on Author { name age bestbook { title } booklist { title price } core { id created trashed } } } }`
	got := c.data(read, map[string]any{"id": "a1"})["get"]
	want := map[string]any{
		"name": "Sudha Murty", "age": float64(70),
		"bestbook": map[string]any{"title": "Wise and Otherwise"},
		"booklist": []any{
			map[string]any{"title": "Wise and Otherwise", "price": 5.99},
			map[string]any{"title": "Gently Falls the Bakula", "price": 7.5},
		},
	}
	core := path(got, "core").(map[string]any)
	delete(got.(map[string]any), "core")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("get Author (-want +got):\n%s", diff)
	}
	if core["id"] != "a1" || core["created"] == nil || core["trashed"] != nil {
		t.Errorf("core = %v", core)
	}

	// An update merges: absent fields keep their values, created is null.
	d = c.data(upsertDoc, map[string]any{"v": map[string]any{"Author": map[string]any{"core": map[string]any{"id": "a1"}, "age": 71}}})
	if m := path(d, "upsert", 0).(map[string]any); m["created"] != nil || m["id"] != "a1" {
		t.Errorf("update metadata = %v, want created null", m)
	}
	got = c.data(read, map[string]any{"id": "a1"})["get"]
	if path(got, "name") != "Sudha Murty" || path(got, "age") != float64(71) || len(path(got, "booklist").([]any)) != 2 {
		t.Errorf("after merge: %s", dump(got))
	}

	// Explicit null clears; a list present in the input replaces the list.
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Author": map[string]any{"core": map[string]any{"id": "a1"}, "age": nil, "booklist": []any{map[string]any{"core": map[string]any{"id": "b1"}}}}}})
	got = c.data(read, map[string]any{"id": "a1"})["get"]
	if path(got, "age") != nil || len(path(got, "booklist").([]any)) != 1 || path(got, "name") != "Sudha Murty" {
		t.Errorf("after clearing age and replacing booklist: %s", dump(got))
	}

	// Metadata sent back with a record is ignored.
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "b1", "created": "1999-01-01T00:00:00.000Z", "createdBy": "mallory"}, "price": 6.5}}})
	b := c.data(`{ get(type: Book, id: "b1") { ... on Book { price core { created createdBy } } } }`, nil)["get"]
	if path(b, "price") != 6.5 || path(b, "core", "created") == "1999-01-01T00:00:00.000Z" || path(b, "core", "createdBy") == "mallory" {
		t.Errorf("client metadata was stored: %s", dump(b))
	}
}

func TestUpsertErrors(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "b1"}, "title": "kept"}}})
	cases := []struct {
		name     string
		vars     map[string]any
		wantCode string
		wantMsg  string
	}{
		{"required field on create", map[string]any{"v": map[string]any{"URL": map[string]any{"host": "example.com"}}}, "BAD_REQUEST", "URL.path is required"},
		{"reference to a missing record", map[string]any{"v": map[string]any{"Author": map[string]any{"name": "x", "bestbook": map[string]any{"core": map[string]any{"id": "nope"}}}}}, "NOT_FOUND", "Book nope does not exist"},
		{"nested failure writes nothing", map[string]any{"v": map[string]any{"Book": []any{map[string]any{"core": map[string]any{"id": "b1"}, "title": "changed"}}, "URL": map[string]any{"port": 1}}}, "BAD_REQUEST", "URL.path is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, msg, code := c.fail(upsertDoc, tc.vars)
			if code != tc.wantCode || !strings.Contains(msg, tc.wantMsg) {
				t.Errorf("got %s %q, want %s containing %q", code, msg, tc.wantCode, tc.wantMsg)
			}
		})
	}
	if title := path(c.data(`{ get(type: Book, id: "b1") { ... on Book { title } } }`, nil), "get", "title"); title != "kept" {
		t.Errorf("a failed upsert changed b1: title %v", title)
	}
	status, _, _ := c.fail(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"titel": "x"}}})
	if status != 400 {
		t.Errorf("unknown input field: status %d, want 400", status)
	}
}
