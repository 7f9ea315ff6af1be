package gql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pageResult is what a page shows: its titles and its PageInfo.
type pageResult struct {
	Titles          []string
	HasPrevious     bool
	HasNext         bool
	Start, End      string
	Limit           float64
	PreviousOffsets []string
	NextOffsets     []string
}

func (c *client) page(args string) pageResult {
	c.t.Helper()
	q := fmt.Sprintf(`{ find(type: Book, %s) { edges { cursor node { ... on Book { title } } }
		pageInfo { hasPreviousPage hasNextPage startCursor endCursor pageLimit previousOffsets nextOffsets } } }`, args)
	d := c.data(q, nil)
	var r pageResult
	r.Titles = []string{}
	for _, e := range path(d, "find", "edges").([]any) {
		title := path(e, "node", "title").(string)
		if path(e, "cursor") != title { // the seeded ids equal the titles
			c.t.Errorf("cursor %v of %s is not the record id", path(e, "cursor"), title)
		}
		r.Titles = append(r.Titles, title)
	}
	pi := path(d, "find", "pageInfo").(map[string]any)
	r.HasPrevious, r.HasNext = pi["hasPreviousPage"].(bool), pi["hasNextPage"].(bool)
	r.Start, r.End, r.Limit = pi["startCursor"].(string), pi["endCursor"].(string), pi["pageLimit"].(float64)
	r.PreviousOffsets, r.NextOffsets = strs(pi["previousOffsets"]), strs(pi["nextOffsets"])
	return r
}

func strs(v any) []string {
	out := []string{}
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

// seq returns P<from>..P<to> (two digits), descending when from > to.
func seq(from, to int) []string {
	out := []string{}
	step := 1
	if from > to {
		step = -1
	}
	for i := from; ; i += step {
		out = append(out, fmt.Sprintf("P%02d", i))
		if i == to {
			return out
		}
	}
}

func TestPaging(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	var books []any
	for i := 1; i <= 60; i++ {
		id := fmt.Sprintf("P%02d", i)
		books = append(books, map[string]any{"core": map[string]any{"id": id}, "title": id, "price": float64(i)})
	}
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Book": books}})

	cases := []struct {
		name string
		args string
		want pageResult
	}{
		{"default page size", `arcql: "*"`, pageResult{Titles: seq(1, 25), HasNext: true, Start: "FIRST", End: "P25", Limit: 25, PreviousOffsets: []string{}, NextOffsets: []string{"P25", "P50"}}},
		{"first page", `arcql: "*", first: 25`, pageResult{Titles: seq(1, 25), HasNext: true, Start: "FIRST", End: "P25", Limit: 25, PreviousOffsets: []string{}, NextOffsets: []string{"P25", "P50"}}},
		{"after FIRST is the first page", `arcql: "*", first: 25, after: "FIRST"`, pageResult{Titles: seq(1, 25), HasNext: true, Start: "FIRST", End: "P25", Limit: 25, PreviousOffsets: []string{}, NextOffsets: []string{"P25", "P50"}}},
		{"second page", `arcql: "*", first: 25, after: "P25"`, pageResult{Titles: seq(26, 50), HasPrevious: true, HasNext: true, Start: "P26", End: "P50", Limit: 25, PreviousOffsets: []string{"FIRST"}, NextOffsets: []string{"P50"}}},
		{"last page", `arcql: "*", first: 25, after: "P50"`, pageResult{Titles: seq(51, 60), HasPrevious: true, Start: "P51", End: "LAST", Limit: 25, PreviousOffsets: []string{"P25", "FIRST"}, NextOffsets: []string{}}},
		{"page number", `arcql: "*", first: 25, page: 3`, pageResult{Titles: seq(51, 60), HasPrevious: true, Start: "P51", End: "LAST", Limit: 25, PreviousOffsets: []string{"P25", "FIRST"}, NextOffsets: []string{}}},
		{"small pages offsets", `arcql: "*", first: 5, after: "P30"`, pageResult{Titles: seq(31, 35), HasPrevious: true, HasNext: true, Start: "P31", End: "P35", Limit: 5,
			PreviousOffsets: []string{"P25", "P20", "P15", "P10", "P05"}, NextOffsets: []string{"P35", "P40", "P45", "P50", "P55"}}},
		{"last from the end", `arcql: "*", last: 10`, pageResult{Titles: seq(51, 60), HasPrevious: true, Start: "P51", End: "LAST", Limit: 10, PreviousOffsets: []string{"P40", "P30", "P20", "P10", "FIRST"}, NextOffsets: []string{}}},
		{"last before a cursor", `arcql: "*", last: 10, before: "P51"`, pageResult{Titles: seq(41, 50), HasPrevious: true, HasNext: true, Start: "P41", End: "P50", Limit: 10, PreviousOffsets: []string{"P30", "P20", "P10", "FIRST"}, NextOffsets: []string{"P50"}}},
		{"last at the start", `arcql: "*", last: 10, before: "P11"`, pageResult{Titles: seq(1, 10), HasNext: true, Start: "FIRST", End: "P10", Limit: 10, PreviousOffsets: []string{}, NextOffsets: []string{"P10", "P20", "P30", "P40", "P50"}}},
		{"sorted and filtered", `arcql: "price > 20 SORT price DESC", first: 10, after: "P51"`, pageResult{Titles: seq(50, 41), HasPrevious: true, HasNext: true, Start: "P50", End: "P41", Limit: 10, PreviousOffsets: []string{"FIRST"}, NextOffsets: []string{"P41", "P31"}}},
		{"empty", `arcql: "price > 100"`, pageResult{Titles: []string{}, Start: "FIRST", End: "LAST", Limit: 25, PreviousOffsets: []string{}, NextOffsets: []string{}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, c.page(tc.args)); diff != "" {
				t.Errorf("find(%s) (-want +got):\n%s", tc.args, diff)
			}
		})
	}

	for _, bad := range []struct{ args, want string }{
		{`arcql: "*", first: 1001`, "between 1 and 1000"},
		{`arcql: "*", first: 0`, "between 1 and 1000"},
		{`arcql: "*", first: 2, last: 2`, "first or last"},
		{`arcql: "*", after: "nope"`, "cursor"},
	} {
		_, msg, code := c.fail(`{ find(type: Book, `+bad.args+`) { edges { cursor } } }`, nil)
		if code != "BAD_REQUEST" || !strings.Contains(msg, bad.want) {
			t.Errorf("find(%s): %s %q, want BAD_REQUEST mentioning %q", bad.args, code, msg, bad.want)
		}
	}
}
