package console_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/internal/mailtest"
	"github.com/corehq/core/internal/nodetest"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestMailInABrowser: in the console (console/e2e/mail.mjs) an operator
// sets an instance's mail server, previews and saves a template, and
// sends a test message; the real SMTP sink receives it, the outbox shows
// it sent, and the password typed is kept (sealed) but never shown.
func TestMailInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test starts chromium")
	}
	chromium, node, _ := browserTools(t)
	_, script := nodetest.Script(t, "console mail browser test", filepath.Join("e2e", "mail.mjs"), "playwright-core")
	env := servertest.Start(t)
	env.PutRelease("notes", "v1", `type Note { text: String }`)
	env.CreateInstance("mail.test", "notes", "v1", tenant.Settings{})
	sink := mailtest.Start(t, "127.0.0.1:0")
	const password = "typed-in-the-console"
	runScript(t, node, script, 3*time.Minute,
		"CORE_URL="+env.URL,
		"CORE_ADMIN_TOKEN="+servertest.AdminToken,
		"SMTP_HOST="+sink.Host,
		"SMTP_PORT="+strconv.Itoa(sink.Port),
		"SMTP_PASSWORD="+password,
		"CHROMIUM="+chromium,
	)
	got := sink.Messages(t)
	if len(got) != 1 || !strings.Contains(got[0].To, "ops@example.com") || !strings.Contains(got[0].Text, "The mail settings of mail.test work.") {
		t.Errorf("the sink received %+v; want the test message to ops@example.com once", got)
	}
	inst, _ := env.Directory.Lookup("mail.test")
	if inst.Settings.SMTP == nil || inst.Settings.SMTP.Password != password || inst.Settings.SMTP.Host != sink.Host {
		t.Errorf("the smtp setting is %+v; want the console's, with its password", inst.Settings.SMTP)
	}
	if tpl := inst.Settings.MailTemplates["passwordReset"]; tpl.Subject != "Code for {{.App}}: {{.Code}}" {
		t.Errorf("the passwordReset template is %+v", tpl)
	}
}
