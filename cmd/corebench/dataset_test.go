package main

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDatasetRows(t *testing.T) {
	t.Parallel()
	d := defaultDataset
	cases := []struct {
		name string
		got  any
		want string // JSON as seeded
	}{
		{"book 1", d.book(1), `{"core":{"id":"b1"},"title":"Book 1","authorid":1,"price":79.19}`},
		{"book 1001", d.book(1001), `{"core":{"id":"b1001"},"title":"Book 1001","authorid":1,"price":69.19}`},
		{"book 10000", d.book(10000), `{"core":{"id":"b10000"},"title":"Book 10000","authorid":1000,"price":0}`},
		{"author 1", d.author(1), `{"core":{"id":"a1"},"name":"Author 1","age":57,"bestbook":{"core":{"id":"b1"}},` +
			`"booklist":[{"core":{"id":"b1"}},{"core":{"id":"b1001"}},{"core":{"id":"b2001"}},{"core":{"id":"b3001"}},{"core":{"id":"b4001"}}]}`},
		{"author 1000", d.author(1000), `{"core":{"id":"a1000"},"name":"Author 1000","age":60,"bestbook":{"core":{"id":"b1000"}},` +
			`"booklist":[{"core":{"id":"b1000"}},{"core":{"id":"b2000"}},{"core":{"id":"b3000"}},{"core":{"id":"b4000"}},{"core":{"id":"b5000"}}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The properties ../shared/bench/README.md states of the data set.
func TestDatasetProperties(t *testing.T) {
	t.Parallel()
	d := defaultDataset
	seen := map[float64]bool{}
	over50 := 0
	for j := 1; j <= d.books; j++ {
		p := d.book(j).Price
		if seen[p] {
			t.Fatalf("price %.2f appears twice", p)
		}
		seen[p] = true
		if p > 50 {
			over50++
		}
	}
	if over50 != 4999 {
		t.Errorf("%d books priced over 50, want 4,999", over50)
	}
	for k := 1; k <= d.authors; k++ {
		for _, r := range d.author(k).Booklist {
			j, err := index(r.Core.ID)
			if err != nil || d.book(j).AuthorID != k {
				t.Fatalf("author %d lists %s, whose authorid is not %d", k, r.Core.ID, k)
			}
		}
	}
	top := d.topPrices(25)
	if len(top) != 25 || top[0] != 99.99 || top[24] != 99.75 {
		t.Errorf("top prices %v, want 99.99 … 99.75", top)
	}
	if ids := d.bookIDs(); len(ids) != 10000 || ids[0] != "b1" || ids[9999] != "b10000" {
		t.Errorf("book ids: %d, %q … %q", len(ids), ids[0], ids[len(ids)-1])
	}
}

func TestDatasetCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d  dataset
		ok bool
	}{
		{defaultDataset, true},
		{dataset{books: 100, authors: 20, perAuthor: 5}, true},
		{dataset{books: 99, authors: 20, perAuthor: 5}, false},
		{dataset{books: 0, authors: 1, perAuthor: 1}, false},
	} {
		if err := tc.d.check(); (err == nil) != tc.ok {
			t.Errorf("%+v: check() = %v, want ok %v", tc.d, err, tc.ok)
		}
	}
}
