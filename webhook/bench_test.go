package webhook_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// BenchmarkWebhook is a webhook calling a small function over real HTTP on
// loopback, warm (runtimes, compiled module and document cached), from
// parallel clients: its req/s is the invocations per second.
func BenchmarkWebhook(b *testing.B) {
	env := servertest.Start(b)
	env.PutRelease("bench", "v1", `type Mutation { hook(payload: WebhookPayload): WebhookResponse @fn(name: "ok", version: "v1") }`)
	token := env.CreateInstance("bench.test", "bench", "v1", tenant.Settings{AnonymousRequests: true})
	res, _ := env.DoRaw("PUT", "/admin/v1/apps/bench/functions/ok/v1", env.AdminHeaders(),
		[]byte(`exports.main = (input, cb) => cb({status: 200, body: {ok: JSON.parse(input.args.payload).method}}, null);`))
	if res.StatusCode >= 300 {
		b.Fatalf("publish: %d", res.StatusCode)
	}
	if status, body := env.GraphQL("bench.test", token, `mutation { upsert(values: {Webhook: {name: "ok", query: {type: Mutation, field: "hook"}}}) { id } }`, nil); status != 200 || body["errors"] != nil {
		b.Fatalf("webhook: %d %v", status, body)
	}
	url := env.URL + "/webhook/bench.test/ok"
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := http.Post(url, "application/json", strings.NewReader(`{"event":"x"}`))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				b.Fatalf("status %d", res.StatusCode)
			}
		}
	})
}
