package rest_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/tenant"
)

// TestAggregate drives GET /rest/v1/aggregate/{type}: totals, a filter,
// groups with order, units, having and paging, distinct values, bad
// parameters, and the owner rule.
func TestAggregate(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t, tenant.Settings{})
	books := []any{
		map[string]any{"title": "Inferno", "authorid": 1, "price": 12.5, "published": "2024-03-01T10:00:00Z"},
		map[string]any{"title": "Purgatorio", "authorid": 1, "price": 10, "published": "2024-03-01T11:30:00Z"},
		map[string]any{"title": "Paradiso", "authorid": 1, "price": 10},
		map[string]any{"title": "Alchemist", "authorid": 3, "price": 30},
	}
	if status, body := admin.do("POST", "/", map[string]any{"values": map[string]any{"Book": books}}); status != 200 {
		t.Fatalf("POST: %d %s", status, dump(body))
	}
	get := func(c *client, query string) (int, map[string]any) {
		t.Helper()
		return c.do("GET", "/aggregate/Book"+query, nil)
	}
	book := func(body map[string]any) any {
		return body["data"].(map[string]any)["aggregate"].(map[string]any)["book"]
	}

	status, body := get(admin, "")
	if status != 200 {
		t.Fatalf("GET: %d %s", status, dump(body))
	}
	got := book(body).(map[string]any)
	want := map[string]any{"count": float64(4), "sum": 62.5, "avg": 15.625, "min": float64(10), "max": float64(30)}
	if d := cmp.Diff(want, got["price"]); d != "" || got["core"].(map[string]any)["count"] != float64(4) {
		t.Errorf("totals: price (-want +got):\n%s\n%s", d, dump(got))
	}
	if d := cmp.Diff(map[string]any{"count": float64(2), "min": "2024-03-01T10:00:00.000Z", "max": "2024-03-01T11:30:00.000Z"}, got["published"]); d != "" {
		t.Errorf("totals: published (-want +got):\n%s", d)
	}

	_, body = get(admin, "?distinct=true&where="+url.QueryEscape("price <= 12.5"))
	price := book(body).(map[string]any)["price"].(map[string]any)
	if price["count"] != float64(3) || price["countDistinct"] != float64(2) || price["sumDistinct"] != 22.5 {
		t.Errorf("distinct over price <= 12.5: %s", dump(price))
	}

	groups := func(query string) []any {
		t.Helper()
		status, body := get(admin, query)
		if status != 200 {
			t.Fatalf("GET %s: %d %s", query, status, dump(body))
		}
		var out []any
		for _, g := range book(body).([]any) {
			g := g.(map[string]any)
			out = append(out, []any{g["groupValues"], g["core"].(map[string]any)["count"]})
		}
		return out
	}
	pair := func(k string, v any) []any { return []any{map[string]any{"key": k, "value": v}} }
	if d := cmp.Diff([]any{
		[]any{pair("authorid", "3"), float64(1)},
		[]any{pair("authorid", "1"), float64(3)},
	}, groups("?groupBy=authorid:DESC")); d != "" {
		t.Errorf("groupBy=authorid:DESC (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]any{
		[]any{pair("published", nil), float64(2)},
		[]any{pair("published", "2024-03-01"), float64(2)},
	}, groups("?groupBy=published:DAYS")); d != "" {
		t.Errorf("groupBy=published:DAYS (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]any{[]any{pair("authorid", "1"), float64(3)}},
		groups("?groupBy=authorid&having="+url.QueryEscape("price.sum > 30"))); d != "" {
		t.Errorf("having (-want +got):\n%s", d)
	}
	_, body = get(admin, "?groupBy=authorid&first=1")
	cursor := book(body).([]any)[0].(map[string]any)["core"].(map[string]any)["cursor"].(string)
	if d := cmp.Diff([]any{[]any{pair("authorid", "3"), float64(1)}}, groups("?groupBy=authorid&after="+cursor)); d != "" {
		t.Errorf("after the first group (-want +got):\n%s", d)
	}

	for _, c := range []struct {
		method, path string
		status       int
		code, msg    string
	}{
		{"GET", "/aggregate/Book?order=1", 400, "BAD_REQUEST", `unknown parameter "order"`},
		{"GET", "/aggregate/Book?having=x", 400, "BAD_REQUEST", "parameter having applies to groups: give groupBy too"},
		{"GET", "/aggregate/Book?groupBy=nope", 400, "BAD_REQUEST", `parameter groupBy: Book has no field "nope" to group by`},
		{"GET", "/aggregate/Book?groupBy=price:UP", 400, "BAD_REQUEST", `parameter groupBy: "price:UP" is not field[:ASC|DESC][:UNIT] (UNIT: SECONDS, MINUTES, HOURS, DAYS, MONTHS or YEARS)`},
		{"GET", "/aggregate/Book?where=" + url.QueryEscape("nope = 1"), 400, "BAD_FILTER", "arcql: 1:1: unknown field Book.nope"},
		{"GET", "/aggregate/Nope", 404, "UNKNOWN_TYPE", `unknown record type "Nope": this schema has no such type`},
		{"DELETE", "/aggregate/Book", 405, "METHOD_NOT_ALLOWED", "method DELETE is not allowed on /rest/v1/aggregate/Book"},
	} {
		status, body := admin.do(c.method, c.path, nil)
		errs, _ := body["errors"].([]any)
		if len(errs) == 0 {
			t.Errorf("%s %s: %d %s, want an error", c.method, c.path, status, dump(body))
			continue
		}
		e := errs[0].(map[string]any)
		if status != c.status || e["extensions"].(map[string]any)["code"] != c.code || !strings.Contains(e["message"].(string), c.msg) {
			t.Errorf("%s %s: %d %s, want %d %s %q", c.method, c.path, status, dump(body), c.status, c.code, c.msg)
		}
	}

	// A session aggregates its own records only.
	admin.do("POST", "/fn/mutation/createAccount", map[string]any{"value": map[string]any{"username": "ada", "password": map[string]any{"value": "ada's password"}}})
	_, body = admin.env.Do("POST", "/rest/v1/login", map[string]string{tenant.Header: admin.domain}, map[string]any{"username": "ada", "password": "ada's password"})
	ada := &client{t: t, env: admin.env, domain: admin.domain, token: body["data"].(map[string]any)["login"].(map[string]any)["sessionToken"].(string)}
	ada.do("POST", "/", map[string]any{"values": map[string]any{"Book": map[string]any{"title": "Ada's", "price": 7}}})
	_, body = get(ada, "")
	if got := book(body).(map[string]any); got["core"].(map[string]any)["count"] != float64(1) || got["price"].(map[string]any)["sum"] != float64(7) {
		t.Errorf("ada's aggregate: %s, want her one book", dump(got))
	}
}
