package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/corehq/core/gql"
	"github.com/corehq/core/internal/hooktest"
	"github.com/corehq/core/metrics"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

func TestMain(m *testing.M) { servertest.MainCheckingLogs(m) }

// TestMetrics drives a real server through its doors and reads the
// figures as Prometheus would, from a listener of their own: requests by
// door, route pattern and status; store operations; function calls by
// outcome; the document cache; instances. The public listener has no
// /metrics.
func TestMetrics(t *testing.T) {
	t.Parallel()
	var env *servertest.Env
	m := metrics.New(metrics.Sources{DocumentCache: gql.DocumentCacheStats, Instances: func() int { return 1 },
		HookPosts: func() (uint64, uint64) { s := env.Hooks.Stats(); return s.Delivered, s.Failed }})
	env = servertest.Start(t, servertest.WithMetrics(m))
	env.PutRelease("m", "v1", `type Note { text: String }
type Query { hello(name: String): String @fn(name: "hello", version: "v1") }`)
	token := env.CreateInstance("m.test", "m", "v1", tenant.Settings{})
	if res, _ := env.DoRaw(http.MethodPut, "/admin/v1/apps/m/functions/hello/v1", env.AdminHeaders(),
		[]byte(`exports.main = (input, cb) => cb('hello ' + input.args.name, null);`)); res.StatusCode >= 300 {
		t.Fatalf("publishing: %d", res.StatusCode)
	}
	for range 2 {
		if st, body := env.GraphQL("m.test", token, `{ find(type: Note, arcql: "*") { edges { cursor } } }`, nil); st != http.StatusOK {
			t.Fatalf("find: %d %v", st, body)
		}
	}
	if st, body := env.GraphQL("m.test", token, `{ hello(name: "ada") }`, nil); st != http.StatusOK || body["data"].(map[string]any)["hello"] != "hello ada" {
		t.Fatalf("hello: %d %v", st, body)
	}
	if res, raw := env.DoRaw(http.MethodGet, "/rest/v1/Note", map[string]string{tenant.Header: "m.test", "authorization": token}, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("rest: %d %s", res.StatusCode, raw)
	}
	if res, _ := env.DoRaw(http.MethodGet, "/rest/v1/Nope", map[string]string{tenant.Header: "m.test", "authorization": token}, nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("rest of an unknown type: %d", res.StatusCode)
	}
	if res, _ := env.DoRaw(http.MethodGet, "/metrics", nil, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics on the public listener: %d, want 404", res.StatusCode)
	}

	// An event hook posts a note's change.
	rcv := hooktest.Start(t)
	for _, v := range []map[string]any{{"EventHook": map[string]any{"url": rcv.URL, "secret": rcv.Secret, "types": []any{"Note"}}}, {"Note": map[string]any{"text": "x"}}} {
		if st, body := env.GraphQL("m.test", token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`, map[string]any{"v": v}); st != http.StatusOK || body["errors"] != nil {
			t.Fatalf("upsert: %d %v", st, body)
		}
	}
	rcv.WaitFor(t, "the post counted", func(*hooktest.Receiver) bool { return env.Hooks.Stats().Delivered >= 1 })

	scrape := httptest.NewServer(m.Handler())
	defer scrape.Close()
	res, err := http.Get(scrape.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	families, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	for name := range families {
		if !strings.HasPrefix(name, "core_") {
			t.Errorf("metric %s does not start with core_", name)
		}
	}
	// value sums the series of family that carry labels.
	value := func(family string, labels map[string]string) float64 {
		t.Helper()
		f := families[family]
		if f == nil {
			t.Fatalf("no metric %s", family)
		}
		sum := 0.0
	next:
		for _, mt := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range mt.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			sum += sampleValue(f.GetType(), mt)
		}
		return sum
	}
	for _, c := range []struct {
		family string
		labels map[string]string
		min    float64
	}{
		{"core_http_requests_total", map[string]string{"door": "graphql", "route": "/graphql", "status": "200"}, 3},
		{"core_http_requests_total", map[string]string{"door": "rest", "route": "/rest/v1/:aggregate", "status": "200"}, 1},
		{"core_http_requests_total", map[string]string{"door": "rest", "route": "/rest/v1/:aggregate", "status": "404"}, 1},
		{"core_http_requests_total", map[string]string{"door": "admin"}, 3},
		{"core_http_request_duration_seconds", map[string]string{"door": "graphql", "route": "/graphql"}, 3},
		{"core_store_operation_duration_seconds", map[string]string{"op": "find"}, 3},
		{"core_function_calls_total", map[string]string{"outcome": "ok"}, 1},
		{"core_function_call_duration_seconds", nil, 1},
		{"core_document_cache_lookups_total", map[string]string{"result": "hit"}, 1},
		{"core_document_cache_lookups_total", map[string]string{"result": "miss"}, 1},
		{"core_instances", nil, 1},
		{"core_hook_posts_total", map[string]string{"outcome": "delivered"}, 1},
	} {
		if got := value(c.family, c.labels); got < c.min {
			t.Errorf("%s%v = %v, want at least %v", c.family, c.labels, got, c.min)
		}
	}
	if got := value("core_function_calls_total", map[string]string{"outcome": "error"}); got != 0 {
		t.Errorf("failed function calls: %v, want 0", got)
	}
}

// sampleValue is a counter's or gauge's value, or a histogram's count.
func sampleValue(typ dto.MetricType, m *dto.Metric) float64 {
	switch typ {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	case dto.MetricType_HISTOGRAM:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

func TestDoor(t *testing.T) {
	t.Parallel()
	for route, want := range map[string]string{
		"/graphql": "graphql", "/rest/v1/:aggregate": "rest", "/upload/*": "files", "/rest/v1/upload/*": "files", "/file/:name": "files", "/webhook/:domain/:name": "webhook", "/admin/v1/instances": "admin",
		"/v2/*": "registry", "/v2": "registry", "/healthz": "health", "unmatched": "other",
	} {
		if got := metrics.Door(route); got != want {
			t.Errorf("Door(%q) = %s, want %s", route, got, want)
		}
	}
}
