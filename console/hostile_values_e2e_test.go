package console_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/internal/nodetest"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// hostileSDL is the instance's schema: a record type with each kind of
// field the console shows (text, a list of text, Json, a reference).
const hostileSDL = `type Note {
  title: String
  link: String
  tags: [String]
  data: Json
  ref: Note
}
type Query {
  shout: String @fn(name: "shout", version: "v1")
}`

// pwn is what every payload below would run: it records that it ran.
const pwn = `(window.__pwned=(window.__pwned||[]).concat(1))`

// hostileTexts are values a tenant's users may store: markup that runs
// script when parsed as HTML, javascript: and data: URLs, entities that
// must not be decoded, template syntax, Unicode that reorders or joins
// what follows, and a long value.
var hostileTexts = []string{
	`<img src=x onerror="` + pwn + `">`,
	`<script>` + pwn + `</script>`,
	`javascript:` + pwn,
	`<a href="javascript:` + pwn + `">a link</a>`,
	`<svg onload="` + pwn + `"><circle r="5"></circle></svg>`,
	`<iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>`,
	`&lt;b&gt;entity&lt;/b&gt; &amp; <b>bold</b> <!-- comment -->`,
	"${" + pwn + "} {{constructor.constructor('" + pwn + "')()}}",
	"\u202egnp.exe \u200b\u200d\ufeff zero-width, 👩‍👩‍👧‍👦, Z̴̡̛͓a̵l̷g̶o, 日本語, עברית, 𝕳𝖊𝖑𝖑𝖔",
	strings.Repeat("long <i>value</i> ", 6000), // 108,000 bytes
}

// hostileIDs are the records' ids: markup, a URL, ArcQL that would
// widen the console's filter by id, paths and a hash route.
var hostileIDs = []string{
	`"><img src=x onerror="` + pwn + `">`,
	`javascript:` + pwn,
	`x' OR core.id != 'x`,
	`../../admin/v1/instances`,
	`%2e%2e%2f#/apps`,
	`<script>` + pwn + `</script>`,
	"note-\u202e-rtl",
	"note-8",
	"note-9",
	"note-10",
}

// hostileLinks are URLs a value may hold; the console never makes one
// a link.
var hostileLinks = []string{
	`javascript:` + pwn,
	`JaVaScRiPt:` + pwn,
	` javascript:` + pwn,
	"java\tscript:" + pwn,
	`data:text/html,<script>` + pwn + `</script>`,
	`vbscript:msgbox(1)`,
}

// TestHostileValuesInABrowser stores hostile values in an instance's
// records (and its function log) through the API, then drives the
// console in Debian's chromium (e2e/hostile.mjs) over them: the records
// table, each record's page and form, and the function log. Every value
// shows as the exact text it is, in cells, headings and form fields; no
// element is made of a value (no img, script, iframe, svg, no on*
// attribute, no link but the console's own routes), no payload runs, the
// page asks the server for nothing but the console's files and its API
// (an <img src=x> would ask for /console/x), and the browser reports no
// error (a refused inline script would). A record whose id is ArcQL
// meant to widen the console's filter opens as itself.
//
// hostile checklist 51: the console never renders record values as HTML
// (a strict CSP besides: TestServesTheEmbeddedFiles).
func TestHostileValuesInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test starts chromium")
	}
	chromium, node, _ := browserTools(t)
	_, script := nodetest.Script(t, "console hostile values browser test", filepath.Join("e2e", "hostile.mjs"), "playwright-core")

	env := servertest.Start(t)
	env.PutRelease("notes", "v1", hostileSDL)
	token := env.CreateInstance("hostile.test", "notes", "v1", tenant.Settings{})

	type note struct {
		ID    string         `json:"id"`
		Title string         `json:"title"`
		Link  string         `json:"link"`
		Tags  []string       `json:"tags"`
		Data  map[string]any `json:"data"`
		Ref   string         `json:"ref"` // the id it references, "" none
	}
	var notes []note
	for i, id := range hostileIDs {
		n := note{ID: id, Title: hostileTexts[i], Link: hostileLinks[i%len(hostileLinks)],
			Tags: []string{hostileTexts[(i+1)%len(hostileTexts)], `<b>second</b>`},
			Data: map[string]any{`<img src=x onerror="` + pwn + `">`: hostileTexts[i]}}
		if i > 0 {
			n.Ref = hostileIDs[i-1]
		}
		notes = append(notes, n)
	}
	// Referenced records first: each refers to the one before.
	for _, n := range notes {
		in := map[string]any{"core": map[string]any{"id": n.ID}, "title": n.Title, "link": n.Link, "tags": n.Tags, "data": n.Data}
		if n.Ref != "" {
			in["ref"] = map[string]any{"core": map[string]any{"id": n.Ref}}
		}
		if st, body := env.GraphQL("hostile.test", token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
			map[string]any{"v": map[string]any{"Note": []any{in}}}); st != 200 || body["errors"] != nil {
			t.Fatalf("storing note %q: %d %v", n.ID, st, body)
		}
	}
	// The function log is tenant content too: a function logs the texts.
	shout := `exports.main = (input, cb) => { for (const t of ` + mustJSON(t, hostileTexts[:len(hostileTexts)-1]) + `) console.log(t); cb('shouted', null); };`
	if res, body := env.DoRaw("PUT", "/admin/v1/apps/notes/functions/shout/v1", env.AdminHeaders(), shout); res.StatusCode >= 300 {
		t.Fatalf("publishing shout: %d %s", res.StatusCode, body)
	}
	if st, body := env.GraphQL("hostile.test", token, `{ shout }`, nil); st != 200 || body["errors"] != nil {
		t.Fatalf("calling shout: %d %v", st, body)
	}

	// What the browser should see, in a file (the long value is over
	// what one environment variable may hold).
	expected := filepath.Join(t.TempDir(), "expected.json")
	if err := os.WriteFile(expected, []byte(mustJSON(t, map[string]any{"notes": notes, "logged": hostileTexts[:len(hostileTexts)-1]})), 0o600); err != nil {
		t.Fatal(err)
	}

	runScript(t, node, script, 4*time.Minute,
		"CORE_URL="+env.URL,
		"CORE_ADMIN_TOKEN="+servertest.AdminToken,
		"CORE_DOMAIN=hostile.test",
		"CORE_INSTANCE_TOKEN="+token,
		"CORE_EXPECTED="+expected,
		"CHROMIUM="+chromium,
	)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(fmt.Errorf("encoding %T: %w", v, err))
	}
	return string(b)
}
