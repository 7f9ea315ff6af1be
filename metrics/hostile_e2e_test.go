package metrics_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/corehq/core/gql"
	"github.com/corehq/core/metrics"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// scrape reads m's text from a listener of its own, as Prometheus does.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	_, b := servertest.Get(t, nil, srv.URL)
	return string(b)
}

// storeOps is the number of data store operations of each kind that the
// metrics counted (core_store_operation_duration_seconds's counts).
func storeOps(t *testing.T, m *metrics.Metrics) map[string]float64 {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	families, err := p.TextToMetricFamilies(strings.NewReader(scrape(t, m)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	if f := families["core_store_operation_duration_seconds"]; f != nil {
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == "op" {
					out[l.GetValue()] += float64(mt.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return out
}

// TestRefusedDocumentsReachNoStore: a document of 1,000 aliases of an
// expensive list field is refused (400 TOO_COMPLEX) before any store
// call: the store operations the server's metrics count do not move,
// while one ordinary find moves them.
//
// hostile checklist 30: 1,000 aliases of an expensive list field → 400
// before any database call.
func TestRefusedDocumentsReachNoStore(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Sources{DocumentCache: gql.DocumentCacheStats})
	env := servertest.Start(t, servertest.WithMetrics(m))
	env.PutRelease("m", "v1", `type Note { text: String }`)
	token := env.CreateInstance("m.test", "m", "v1", tenant.Settings{})
	var doc strings.Builder
	doc.WriteString("{")
	for i := range 1000 {
		// Short enough that the document stays under its length limit
		// (64 KiB): the alias and cost limits are what refuse it.
		fmt.Fprintf(&doc, "a%d:find(type:Note,arcql:\"*\",first:1000){edges{cursor}}", i)
	}
	doc.WriteString(" }")
	reads := func(ops map[string]float64) float64 {
		return ops["get"] + ops["get_many"] + ops["find"] + ops["aggregate"] + ops["write"]
	}
	before := storeOps(t, m)
	for _, variables := range []map[string]any{nil, {"unused": 1}} {
		status, body := env.GraphQL("m.test", token, doc.String(), variables)
		if _, code := servertest.FirstError(body); status != 400 || code != "TOO_COMPLEX" {
			msg, _ := servertest.FirstError(body)
			t.Errorf("1,000 aliases: %d %v %s, want 400 TOO_COMPLEX", status, code, msg)
		}
	}
	after := storeOps(t, m)
	if reads(after) != reads(before) {
		t.Errorf("store operations moved for refused documents: before %v, after %v", before, after)
	}
	// The observable works: one find is counted.
	if status, body := env.GraphQL("m.test", token, `{ find(type: Note, arcql: "*") { edges { cursor } } }`, nil); status != 200 {
		t.Fatalf("a find: %d %v", status, body)
	}
	if got := storeOps(t, m); got["find"] <= after["find"] {
		t.Errorf("a find was not counted: %v then %v", after, got)
	}
}

// TestScrapeHoldsNoSecretsAndBoundedSeries drives the doors with
// instance tokens, session tokens, many domains, record ids, webhook and
// REST paths and unmatched paths, twice with different values: the
// scraped text names none of them, and the second round adds no series.
//
// hostile checklist 54: metrics hold no secrets and have bounded labels.
func TestScrapeHoldsNoSecretsAndBoundedSeries(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Sources{DocumentCache: gql.DocumentCacheStats, Instances: func() int { return 1 }})
	env := servertest.Start(t, servertest.WithMetrics(m))
	env.PutRelease("m", "v1", `type Note { text: String }`)
	var secrets []string
	round := func(n int) {
		for i := range 3 {
			domain := fmt.Sprintf("tenant-%d-%d.test", n, i)
			token := env.CreateInstance(domain, "m", "v1", tenant.Settings{AnonymousRequests: true})
			secrets = append(secrets, domain, token)
			h := map[string]string{tenant.Header: domain, "authorization": token}
			status, body := env.GraphQL(domain, token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
				map[string]any{"v": map[string]any{"Note": map[string]any{"text": "secret text " + domain}}})
			up, _ := body["data"].(map[string]any)["upsert"].([]any)
			if status != 200 || len(up) != 1 {
				t.Fatalf("upsert: %d %v", status, body)
			}
			id := up[0].(map[string]any)["id"].(string)
			secrets = append(secrets, id, "secret text "+domain)
			// An account and its session token.
			st, b := env.GraphQL(domain, token, `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
				map[string]any{"v": map[string]any{"username": "u1", "password": map[string]any{"value": "a long password 1"}}})
			if st != 200 || b["errors"] != nil {
				t.Fatalf("createAccount: %d %v", st, b)
			}
			st, b = env.GraphQL(domain, "", `query($u: String!, $p: String!) { login(username: $u, password: $p) { sessionToken } }`,
				map[string]any{"u": "u1", "p": "a long password 1"})
			login, _ := b["data"].(map[string]any)["login"].(map[string]any)
			session, _ := login["sessionToken"].(string)
			if st != 200 || session == "" {
				t.Fatalf("login: %d %v", st, b)
			}
			secrets = append(secrets, session, "a long password 1")
			unique := store.NewID()
			secrets = append(secrets, unique)
			for _, req := range []struct{ method, path string }{
				{"GET", "/rest/v1/Note/" + id},
				{"GET", "/rest/v1/Note/" + unique},
				{"GET", "/rest/v1/" + unique},
				{"GET", "/rest/v1/Note?arcql=" + unique},
				{"POST", "/webhook/" + domain + "/" + unique},
				{"GET", "/" + unique + "/" + domain},
				{"GET", "/admin/v1/instances/" + domain},
				{"GET", "/graphql?query=%7B__typename%7D&token=" + session},
			} {
				headers := map[string]string{"authorization": session, tenant.Header: domain}
				if strings.HasPrefix(req.path, "/admin/") {
					headers = env.AdminHeaders()
				}
				env.DoRaw(req.method, req.path, headers, nil)
			}
			env.DoRaw("GET", "/rest/v1/Note", h, nil)
		}
	}
	series := func(text string) int {
		n := 0
		for _, line := range strings.Split(text, "\n") {
			if line != "" && !strings.HasPrefix(line, "#") {
				n++
			}
		}
		return n
	}
	round(1)
	first := scrape(t, m)
	round(2)
	second := scrape(t, m)
	for _, s := range secrets {
		if strings.Contains(second, s) {
			t.Errorf("the scraped metrics hold %q", s)
		}
	}
	if a, b := series(first), series(second); a != b {
		t.Errorf("%d series after the first round, %d after a second with other domains, ids and paths: want the same", a, b)
	}
	t.Logf("%d series", series(second))
}
