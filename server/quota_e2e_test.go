package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/tenant"
)

// TestQuotaWrites drives the records and storageBytes quotas through the
// real server, on every door that writes, on both stores: a batch that
// would pass a quota is refused whole with 403 QUOTA_EXCEEDED naming the
// quota and its limit, and a find shows that none of it was written;
// reads go on over the quota, and deletes and trash always pass.
func TestQuotaWrites(t *testing.T) {
	t.Parallel()
	for kind, open := range map[string]func(testing.TB) store.Store{
		servertest.KindBolt:  func(t testing.TB) store.Store { return bolttest.Open(t) },
		servertest.KindMongo: func(t testing.TB) store.Store { return mongotest.Open(t) },
	} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testQuotaWrites(t, servertest.Start(t, servertest.WithStore(open(t))))
		})
	}
}

func testQuotaWrites(t *testing.T, env *servertest.Env) {
	env.PutRelease("notes", "v1", "type Note { text: String }")
	// The instance's own Account record counts: 1 + 3 notes.
	token := env.CreateInstance("quota.test", "notes", "v1", tenant.Settings{Quota: tenant.Quota{Records: 4}})
	h := map[string]string{tenant.Header: "quota.test", "authorization": token}
	upsert := `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`
	notes := func(texts ...string) map[string]any {
		list := []any{}
		for _, s := range texts {
			list = append(list, map[string]any{"text": s})
		}
		return map[string]any{"v": map[string]any{"Note": list}}
	}
	texts := func() []string {
		t.Helper()
		st, body := env.GraphQL("quota.test", token, `{ find(type: Note, arcql: "* SORT text", first: 100) { edges { node { ... on Note { text } } } } }`, nil)
		if st != http.StatusOK {
			t.Fatalf("find: %d %s", st, jsonText(body))
		}
		var out []string
		for _, e := range body["data"].(map[string]any)["find"].(map[string]any)["edges"].([]any) {
			out = append(out, e.(map[string]any)["node"].(map[string]any)["text"].(string))
		}
		return out
	}
	wantQuota := func(what string, st int, body map[string]any, quota, limit string) {
		t.Helper()
		msg, code := servertest.FirstError(body)
		if code != "QUOTA_EXCEEDED" || !strings.Contains(msg, quota+" quota of "+limit) || !strings.Contains(msg, "quota.test") {
			t.Errorf("%s: %d %s, want QUOTA_EXCEEDED naming the %s quota of %s", what, st, jsonText(body), quota, limit)
		}
	}

	if st, body := env.GraphQL("quota.test", token, upsert, notes("a", "b")); st != http.StatusOK || body["errors"] != nil {
		t.Fatalf("two notes within the quota: %d %s", st, jsonText(body))
	}
	// A batch of two where one would fit: refused whole.
	st, body := env.GraphQL("quota.test", token, upsert, notes("c", "d"))
	wantQuota("a GraphQL batch past the records quota", st, body, "records", "4")
	if got := texts(); strings.Join(got, ",") != "a,b" {
		t.Errorf("notes after the refused batch: %v, want a,b", got)
	}
	// The same through REST: 403.
	res, raw := env.DoRaw(http.MethodPost, "/rest/v1/", h, map[string]any{"values": map[string]any{"Note": []any{
		map[string]any{"text": "c"}, map[string]any{"text": "d"}}}})
	if res.StatusCode != http.StatusForbidden || !strings.Contains(string(raw), "QUOTA_EXCEEDED") || !strings.Contains(string(raw), "records quota of 4") {
		t.Errorf("a REST batch past the records quota: %d %s, want 403 QUOTA_EXCEEDED", res.StatusCode, raw)
	}
	if got := texts(); strings.Join(got, ",") != "a,b" {
		t.Errorf("notes after the refused REST batch: %v, want a,b", got)
	}
	// One more fits; then the instance is full, and reads go on.
	if res, raw := env.DoRaw(http.MethodPost, "/rest/v1/", h, map[string]any{"values": map[string]any{"Note": map[string]any{"text": "c"}}}); res.StatusCode != http.StatusOK {
		t.Fatalf("a third note: %d %s", res.StatusCode, raw)
	}
	st, body = env.GraphQL("quota.test", token, upsert, notes("d"))
	wantQuota("a create at the quota", st, body, "records", "4")
	if got := texts(); strings.Join(got, ",") != "a,b,c" {
		t.Errorf("reads over the quota: %v, want a,b,c", got)
	}
	if res, raw := env.DoRaw(http.MethodGet, "/rest/v1/Note", h, nil); res.StatusCode != http.StatusOK {
		t.Errorf("a REST read at the quota: %d %s", res.StatusCode, raw)
	}
	// Trash keeps the record counted; a delete makes room.
	if st, body := env.GraphQL("quota.test", token, `mutation { trash(type: Note, arcql: "text = 'c'") }`, nil); st != http.StatusOK || body["errors"] != nil {
		t.Fatalf("trash at the quota: %d %s", st, jsonText(body))
	}
	st, body = env.GraphQL("quota.test", token, upsert, notes("d"))
	wantQuota("a create with a record trashed", st, body, "records", "4")
	if res, raw := env.DoRaw(http.MethodDelete, "/rest/v1/Note?arcql=text%20%3D%20%27c%27", h, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("a delete at the quota: %d %s", res.StatusCode, raw)
	}
	if st, body := env.GraphQL("quota.test", token, upsert, notes("d")); st != http.StatusOK || body["errors"] != nil {
		t.Errorf("a create after a delete: %d %s", st, jsonText(body))
	}

	// storageBytes: from what the instance holds now, 40 bytes more.
	st, usage := env.Admin(http.MethodGet, "/instances/quota.test/usage", nil)
	if st != http.StatusOK {
		t.Fatalf("usage: %d %s", st, jsonText(usage))
	}
	bytes := int64(usage["storageBytes"].(float64))
	limit := bytes + 40
	if st, body := env.Admin(http.MethodPatch, "/instances/quota.test", map[string]any{"quota": map[string]any{"records": 0, "storageBytes": limit}}); st != http.StatusOK {
		t.Fatalf("setting a storage quota: %d %s", st, jsonText(body))
	}
	big := strings.Repeat("x", 30)
	st, body = env.GraphQL("quota.test", token, upsert, notes(big, big))
	wantQuota("a batch past the storage quota", st, body, "storageBytes", jsonText(limit))
	if got := texts(); strings.Join(got, ",") != "a,b,d" {
		t.Errorf("notes after the refused batch: %v, want a,b,d", got)
	}
	if st, body := env.GraphQL("quota.test", token, `mutation { delete(type: Note, arcql: "text = 'a'") }`, nil); st != http.StatusOK || body["errors"] != nil {
		t.Errorf("a delete over the storage quota: %d %s", st, jsonText(body))
	}
	// A bad quota is refused, naming it; null lifts every bound.
	if st, body := env.Admin(http.MethodPatch, "/instances/quota.test", map[string]any{"quota": map[string]any{"records": -1}}); st != http.StatusBadRequest ||
		!strings.Contains(jsonText(body), "quota.records must not be negative") {
		t.Errorf("a negative quota: %d %s", st, jsonText(body))
	}
	if st, body := env.Admin(http.MethodPatch, "/instances/quota.test", map[string]any{"quota": nil}); st != http.StatusOK {
		t.Fatalf("lifting the quota: %d %s", st, jsonText(body))
	}
	if st, body := env.GraphQL("quota.test", token, upsert, notes(big, big)); st != http.StatusOK || body["errors"] != nil {
		t.Errorf("the batch without a quota: %d %s", st, jsonText(body))
	}
}
