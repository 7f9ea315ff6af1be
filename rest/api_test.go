package rest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAPICache: one API per compiled schema, built once.
func TestAPICache(t *testing.T) {
	t.Parallel()
	_, s1 := testAPI(t)
	_, s2 := testAPI(t)
	var c apiCache
	a := c.get(s1)
	if c.get(s1) != a {
		t.Error("a second get of the same schema built another API")
	}
	if c.get(s2) == a {
		t.Error("two schemas share an API")
	}
}

// TestSelection pins the rules of the generated selections on the golden
// schema: core in full, references one level deep, a union narrowed to
// the type a request names.
func TestSelection(t *testing.T) {
	t.Parallel()
	a, _ := testAPI(t)
	core := "core { id created updated trashed createdBy impl app release instance publisherRealm publisherApp publisherRelease instanceId }"
	book := "{ " + core + " title authorid price tags published meta genre }"
	get, ok := a.field(rootQuery, "get")
	if !ok {
		t.Fatal("no get")
	}
	for _, tc := range []struct{ name, got, want string }{
		{"a record with references", get.selFor("Author"), "{ ... on Author { " + core + " name age bestbook " + book + " booklist " + book + " } }"},
		{"a built-in record with an embedded object", get.selFor("Webhook"),
			"{ ... on Webhook { " + core + " name as { " + core + " username emails { type value } phones { code number } enabled verified } query { field selection type } } }"},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if u := get.selFor(""); u != get.sel || len(u) < 100 {
		t.Errorf("the union unnarrowed: %s", u)
	}
}
