package gql_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cmpSorted compares string lists as sets.
var cmpSorted = cmpopts.SortSlices(strings.Compare)

// aggBooks writes books as c: title, authorid, price (nil: none) and
// published.
func (c *client) aggBooks(books ...map[string]any) {
	c.t.Helper()
	list := make([]any, len(books))
	for i, b := range books {
		list[i] = b
	}
	c.data(grantDoc, map[string]any{"v": map[string]any{"Book": list}})
}

const (
	bookTotals = `query($w: String) { aggregate { book(where: $w) {
		core { count cursor } price { count sum avg min max countD: count(distinct: true) sumD: sum(distinct: true) }
		authorid { sum max } published { min max } title { count(distinct: true) } groupValues { key value } } } }`
	byAuthor = `query($h: String, $n: Int, $a: String, $o: AggOrder) { aggregate { bookWith(groupBy: [{field: authorid, order: $o}], having: $h, first: $n, after: $a) {
		core { count cursor } price { sum } groupValues { key value } } } }`
)

func TestAggregate(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t)
	admin.aggBooks(
		map[string]any{"title": "Inferno", "authorid": 1, "price": 12.5, "published": "2024-03-01T10:00:00Z"},
		map[string]any{"title": "Purgatorio", "authorid": 1, "price": 10, "published": "2024-03-01T11:30:00Z"},
		map[string]any{"title": "Paradiso", "authorid": 1, "price": 10, "published": "2025-01-05T00:00:00Z"},
		map[string]any{"title": "Gitanjali", "authorid": 4},
		map[string]any{"title": "Alchemist", "authorid": 3, "price": 30},
	)

	t.Run("totals", func(t *testing.T) {
		got := path(admin.data(bookTotals, nil), "aggregate", "book")
		want := map[string]any{
			"core":        map[string]any{"count": float64(5), "cursor": nil},
			"price":       map[string]any{"count": float64(4), "sum": 62.5, "avg": 15.625, "min": float64(10), "max": float64(30), "countD": float64(3), "sumD": 52.5},
			"authorid":    map[string]any{"sum": float64(10), "max": float64(4)},
			"published":   map[string]any{"min": "2024-03-01T10:00:00.000Z", "max": "2025-01-05T00:00:00.000Z"},
			"title":       map[string]any{"count": float64(5)},
			"groupValues": []any{},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
		got = path(admin.data(bookTotals, map[string]any{"w": "price > 10"}), "aggregate", "book", "price")
		if path(got, "count") != float64(2) || path(got, "sum") != 42.5 {
			t.Errorf("price > 10: %s", dump(got))
		}
		got = path(admin.data(bookTotals, map[string]any{"w": `title = "none"`}), "aggregate", "book")
		if path(got, "core", "count") != float64(0) || path(got, "price", "avg") != nil || path(got, "price", "sum") != nil || path(got, "price", "count") != float64(0) {
			t.Errorf("no records: %s", dump(got))
		}
	})

	t.Run("groups", func(t *testing.T) {
		rows := func(vars map[string]any) []string {
			t.Helper()
			var out []string
			for _, g := range path(admin.data(byAuthor, vars), "aggregate", "bookWith").([]any) {
				out = append(out, dump([]any{path(g, "groupValues", 0, "key"), path(g, "groupValues", 0, "value"), path(g, "core", "count"), path(g, "price", "sum")}))
			}
			return out
		}
		row := func(v any, n int, sum any) string { return dump([]any{"authorid", v, float64(n), sum}) }
		all := []string{row("1", 3, 32.5), row("3", 1, float64(30)), row("4", 1, nil)}
		if d := cmp.Diff(all, rows(nil)); d != "" {
			t.Errorf("by author (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]string{all[2], all[1], all[0]}, rows(map[string]any{"o": "DESC"})); d != "" {
			t.Errorf("by author, descending (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]string{all[0]}, rows(map[string]any{"h": "core.count >= 2 AND price.sum > 30"})); d != "" {
			t.Errorf("having (-want +got):\n%s", d)
		}
		first := path(admin.data(byAuthor, map[string]any{"n": 2}), "aggregate", "bookWith").([]any)
		if len(first) != 2 {
			t.Fatalf("first 2: %s", dump(first))
		}
		cursor := path(first[1], "core", "cursor")
		if d := cmp.Diff(all[2:], rows(map[string]any{"a": cursor})); d != "" {
			t.Errorf("after the second group (-want +got):\n%s", d)
		}
	})

	t.Run("time buckets", func(t *testing.T) {
		d := admin.data(`{ aggregate { bookWith(groupBy: [{field: published, dateGranularity: DAYS}, {field: core_created, dateGranularity: YEARS}]) { core { count } groupValues { key value } } } }`, nil)
		var got []string
		for _, g := range path(d, "aggregate", "bookWith").([]any) {
			got = append(got, dump([]any{path(g, "groupValues", 0, "value"), path(g, "core", "count"), path(g, "groupValues", 1, "key")}))
		}
		want := []string{
			dump([]any{nil, float64(2), "core_created"}),
			dump([]any{"2024-03-01", float64(2), "core_created"}),
			dump([]any{"2025-01-05", float64(1), "core_created"}),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})

	t.Run("introspection", func(t *testing.T) {
		d := admin.data(`{ q: __type(name: "Query") { fields { name type { ofType { name } } } }
			a: __type(name: "CoreAggregation") { fields { name args { name } } }
			f: __type(name: "BookAggField") { enumValues { name } } }`, nil)
		var root any
		for _, f := range path(d, "q", "fields").([]any) {
			if path(f, "name") == "aggregate" {
				root = path(f, "type", "ofType", "name")
			}
		}
		if root != "CoreAggregation" {
			t.Errorf("Query.aggregate: %v, want CoreAggregation!", root)
		}
		args := map[string][]string{}
		for _, f := range path(d, "a", "fields").([]any) {
			var names []string
			for _, a := range path(f, "args").([]any) {
				names = append(names, path(a, "name").(string))
			}
			args[path(f, "name").(string)] = names
		}
		if got := args["bookWith"]; !cmp.Equal(got, []string{"where", "groupBy", "having", "first", "after", "includeTrashed"}, cmpSorted) {
			t.Errorf("CoreAggregation.bookWith args: %v", got)
		}
		if got := args["book"]; !cmp.Equal(got, []string{"where", "includeTrashed"}, cmpSorted) {
			t.Errorf("CoreAggregation.book args: %v", got)
		}
		var values []string
		for _, v := range path(d, "f", "enumValues").([]any) {
			values = append(values, path(v, "name").(string))
		}
		if !slices.Contains(values, "price") || !slices.Contains(values, "core_created") || slices.Contains(values, "meta") {
			t.Errorf("BookAggField: %v, want the scalar fields and core dates", values)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		for _, c := range []struct{ doc, code, msg string }{
			{`{ aggregate { book(where: "nope > 1") { core { count } } } }`, "BAD_FILTER", "arcql: 1:1: unknown field Book.nope"},
			{`{ aggregate { book(where: "* SORT price") { core { count } } } }`, "BAD_FILTER", "where: an aggregate's filter cannot sort (groupBy orders the groups)"},
			{`{ aggregate { bookWith(groupBy: [{field: price}], having: "price.median > 1") { core { count } } } }`, "BAD_FILTER", "having: arcql: 1:1: unknown field aggregates of price.median"},
			{`{ aggregate { bookWith(groupBy: [{field: title, dateGranularity: DAYS}]) { core { count } } } }`, "BAD_REQUEST", "groupBy: dateGranularity applies to DateTime fields; Book.title is String"},
			{`{ aggregate { bookWith(groupBy: []) { core { count } } } }`, "BAD_REQUEST", "groupBy: name at least one field"},
			{`{ aggregate { bookWith(groupBy: [{field: price}, {field: price}]) { core { count } } } }`, "BAD_REQUEST", "groupBy: price is named twice"},
			{`{ aggregate { bookWith(groupBy: [{field: price}], first: 0) { core { count } } } }`, "BAD_REQUEST", "first: must be between 1 and 10000"},
			{`{ aggregate { bookWith(groupBy: [{field: price}], after: "xyz") { core { count } } } }`, "BAD_REQUEST", "after: not a group cursor of this query"},
		} {
			if _, msg, code := admin.fail(c.doc, nil); code != c.code || msg != c.msg {
				t.Errorf("%s: %s %q, want %s %q", c.doc, code, msg, c.code, c.msg)
			}
		}
	})

	t.Run("trashed records", func(t *testing.T) {
		admin.data(`mutation { trash(type: Book, arcql: "title = 'Alchemist'") }`, nil)
		defer admin.data(`mutation { untrash(type: Book, arcql: "title = 'Alchemist'") }`, nil)
		count := func(doc string) any {
			return path(admin.data(doc, nil), "aggregate", "book", "core", "count")
		}
		if got := count(`{ aggregate { book { core { count } } } }`); got != float64(4) {
			t.Errorf("without the trashed book: %v, want 4", got)
		}
		if got := count(`{ aggregate { book(includeTrashed: true) { core { count } } } }`); got != float64(5) {
			t.Errorf("with includeTrashed: %v, want 5", got)
		}
	})
}

// TestAggregateObeysAccessRights: an account aggregates what it may read:
// its own records, those grants give it, and of records a grant shows
// only some fields of, only those fields.
func TestAggregateObeysAccessRights(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t)
	ada, bob, _, bobID := admin.adaAndBob()
	ada.aggBooks(map[string]any{"title": "a1", "price": 100}, map[string]any{"title": "a2", "price": 200}, map[string]any{"title": "a3", "price": 300})
	bob.aggBooks(map[string]any{"title": "b1", "price": 1}, map[string]any{"title": "b2", "price": 2})
	const doc = `{ aggregate { book { core { count } price { count sum } title { count } } bookWith(groupBy: [{field: price}]) { core { count } } } }`
	totals := func(c *client) []any {
		t.Helper()
		d := c.data(doc, nil)
		return []any{path(d, "aggregate", "book", "core", "count"), path(d, "aggregate", "book", "price", "count"),
			path(d, "aggregate", "book", "price", "sum"), path(d, "aggregate", "book", "title", "count"),
			float64(len(path(d, "aggregate", "bookWith").([]any)))}
	}
	check := func(who string, c *client, want ...any) {
		t.Helper()
		if d := cmp.Diff(want, totals(c)); d != "" {
			t.Errorf("%s: [count, price count, price sum, title count, price groups] (-want +got):\n%s", who, d)
		}
	}
	check("the instance token", admin, 5.0, 5.0, 603.0, 5.0, 5.0)
	check("bob, his own", bob, 2.0, 2.0, 3.0, 2.0, 2.0)
	check("ada, her own", ada, 3.0, 3.0, 600.0, 3.0, 3.0)

	// Ada's books to bob, titles only: he counts them, not their prices.
	titles := ada.grant(map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query", "operation": "find",
		"permissionType": "RBP", "fields": "title", "members": members(bobID)})
	check("bob with ada's titles", bob, 5.0, 2.0, 3.0, 5.0, 3.0)
	// All fields: he counts everything.
	ada.data(grantDoc, map[string]any{"v": map[string]any{"AccessRight": map[string]any{"core": map[string]any{"id": titles}, "fields": nil}}})
	check("bob with ada's books", bob, 5.0, 5.0, 603.0, 5.0, 5.0)
	// Revoked: his own again.
	ada.data(`mutation($id: String!) { delete(type: AccessRight, arcql: $id) }`, map[string]any{"id": `core.id = "` + titles + `"`})
	check("bob after the revoke", bob, 2.0, 2.0, 3.0, 2.0, 2.0)

	// Anonymous callers: refused unless the instance allows them, then
	// they count what grants to anonymous give (nothing here).
	anon := &client{t: t, env: admin.env, domain: admin.domain}
	if status, _, code := anon.fail(doc, nil); status != 401 || code != "UNAUTHENTICATED" {
		t.Errorf("anonymous: %d %s, want 401 UNAUTHENTICATED", status, code)
	}
}
