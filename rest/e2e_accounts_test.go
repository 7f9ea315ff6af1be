package rest_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/corehq/core/tenant"
)

// TestOwnerRuleOverREST checks that a session acts as its account through
// /rest/v1 too: its records are its own, another account's read as missing
// and cannot be changed or deleted.
func TestOwnerRuleOverREST(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t, tenant.Settings{})
	ids := map[string]string{}
	for _, u := range []string{"ada", "bob"} {
		status, body := admin.do("POST", "/fn/mutation/createAccount", map[string]any{"value": map[string]any{
			"username": u, "password": map[string]any{"value": u + "'s password"}}})
		if status != 200 {
			t.Fatalf("createAccount %s: %d %s", u, status, dump(body))
		}
		if ids[u], _ = body["data"].(map[string]any)["createAccount"].(map[string]any)["id"].(string); ids[u] == "" {
			t.Fatalf("createAccount %s answered no id: %s", u, dump(body))
		}
	}
	session := func(u string) *client {
		_, body := admin.env.Do("POST", "/rest/v1/login", map[string]string{tenant.Header: admin.domain}, map[string]any{"username": u, "password": u + "'s password"})
		token, _ := body["data"].(map[string]any)["login"].(map[string]any)["sessionToken"].(string)
		if token == "" {
			t.Fatalf("login %s: %s", u, dump(body))
		}
		return &client{t: t, env: admin.env, domain: admin.domain, token: token}
	}
	ada, bob := session("ada"), session("bob")
	if status, body := ada.do("POST", "/", map[string]any{"values": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "adas"}, "title": "Ada's"}}}); status != 200 {
		t.Fatalf("ada's POST: %d %s", status, dump(body))
	}
	if status, _ := ada.do("GET", "/Book/adas", nil); status != 200 {
		t.Errorf("ada reads her book: %d", status)
	}
	if status, _ := bob.do("GET", "/Book/adas", nil); status != 404 {
		t.Errorf("bob reads ada's book: %d, want 404", status)
	}
	if status, body := bob.do("PUT", "/", map[string]any{"values": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "adas"}, "title": "Bob's now"}}}); status != 403 {
		t.Errorf("bob updates ada's book: %d %s, want 403", status, dump(body))
	}
	if status, body := bob.do("DELETE", "/Book/adas", nil); status != 200 || body["data"].(map[string]any)["delete"] != float64(0) {
		t.Errorf("bob deletes ada's book: %d %s, want 0 deleted", status, dump(body))
	}
	if status, body := admin.do("GET", "/Book/adas", nil); status != 200 || !strings.Contains(dump(body), `"title": "Ada's"`) {
		t.Errorf("ada's book after bob's refused writes: %d %s", status, dump(body))
	}

	// A grant from ada lets bob read her book through REST, and only read.
	if status, body := ada.do("POST", "/", map[string]any{"values": map[string]any{"AccessRight": map[string]any{
		"resource": "adas", "resourceType": "Book", "operationType": "Query", "operation": "get", "permissionType": "RBP",
		"members": []any{map[string]any{"core": map[string]any{"id": ids["bob"]}}}}}}); status != 200 {
		t.Fatalf("ada grants bob her book: %d %s", status, dump(body))
	}
	if status, body := bob.do("GET", "/Book/adas", nil); status != 200 || !strings.Contains(dump(body), `"title": "Ada's"`) {
		t.Errorf("bob reads ada's granted book: %d %s", status, dump(body))
	}
	if status, body := bob.do("GET", "/Book", nil); status != 200 || !strings.Contains(dump(body), `"title": "Ada's"`) {
		t.Errorf("bob lists books with ada's grant: %d %s", status, dump(body))
	}
	if status, body := bob.do("PUT", "/", map[string]any{"values": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "adas"}, "title": "Bob's now"}}}); status != 403 {
		t.Errorf("bob updates ada's book he may read: %d %s, want 403", status, dump(body))
	}
	// An upsert grant lets him change it, through a team of ada's.
	admin.env.PutRelease("bookstore", "v2", bookstoreSDL(t)+"\ntype Team { colleagues: [Account!] }\n")
	if status, body := admin.env.Admin("PATCH", "/instances/"+admin.domain, map[string]any{"release": "v2"}); status != 200 {
		t.Fatalf("swap to v2: %d %s", status, dump(body))
	}
	if status, body := admin.do("POST", "/", map[string]any{"values": map[string]any{"Team": map[string]any{"core": map[string]any{"id": "t1"},
		"colleagues": []any{map[string]any{"core": map[string]any{"id": ids["bob"]}}}}}}); status != 200 {
		t.Fatalf("the team: %d %s", status, dump(body))
	}
	if status, body := ada.do("POST", "/", map[string]any{"values": map[string]any{"AccessRight": map[string]any{
		"resource": "adas", "resourceType": "Book", "operationType": "Mutation", "operation": "upsert", "permissionType": "RBP",
		"membersSourceType": "Team", "membersSourceField": "colleagues", "membersSourceId": "t1"}}}); status != 200 {
		t.Fatalf("ada grants her team an update: %d %s", status, dump(body))
	}
	if status, body := bob.do("PUT", "/", map[string]any{"values": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "adas"}, "title": "Edited"}}}); status != 200 {
		t.Errorf("bob, in ada's team, updates her book: %d %s", status, dump(body))
	}
	if status, body := ada.do("GET", "/Book/adas", nil); status != 200 || !strings.Contains(dump(body), `"title": "Edited"`) {
		t.Errorf("ada's book after her team's edit: %d %s", status, dump(body))
	}

	// A title-only grant: the price reads as null and cannot be probed by
	// filtering on it, through REST too.
	ada.do("POST", "/", map[string]any{"values": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "adas2"}, "title": "Priced", "price": 10}}})
	if status, body := ada.do("POST", "/", map[string]any{"values": map[string]any{"AccessRight": map[string]any{
		"resource": "adas2", "resourceType": "Book", "operationType": "Query", "operation": "find", "permissionType": "RBP", "fields": "title",
		"members": []any{map[string]any{"core": map[string]any{"id": ids["bob"]}}}}}}); status != 200 {
		t.Fatalf("ada grants bob a title: %d %s", status, dump(body))
	}
	titles := func(arcql string) string {
		status, body := bob.do("GET", "/Book?arcql="+url.QueryEscape(arcql), nil)
		if status != 200 {
			t.Fatalf("bob's GET /Book?arcql=%s: %d %s", arcql, status, dump(body))
		}
		return dump(body)
	}
	if got := titles(`title = "Priced"`); !strings.Contains(got, `"title": "Priced"`) || !strings.Contains(got, `"price": null`) {
		t.Errorf("bob finds the title-only book by title: %s", got)
	}
	for _, q := range []string{"price = 10", "price > 1", "* SORT price"} {
		if got := titles(q); strings.Contains(got, "Priced") {
			t.Errorf("bob probes the hidden price with %q: %s", q, got)
		}
	}
	for where, want := range map[string]float64{"price = 10": 0, `title = "Priced"`: 1} {
		status, body := bob.do("GET", "/aggregate/Book?where="+url.QueryEscape(where), nil)
		agg, _ := body["data"].(map[string]any)["aggregate"].(map[string]any)["book"].(map[string]any)
		if core, _ := agg["core"].(map[string]any); status != 200 || core["count"] != want {
			t.Errorf("bob's REST aggregate where %s: %d %s, want a count of %v", where, status, dump(body), want)
		}
	}
}
