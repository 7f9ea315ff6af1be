package admin

import (
	"net/http"
	"net/mail"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	mailer "github.com/corehq/core/mail"
	"github.com/corehq/core/tenant"
)

// Mail serves an instance's outbox and mail checks:
// GET /admin/v1/instances/{domain}/outbox, POST …/mail/test and
// POST …/mail/preview.
type Mail struct {
	reg    *tenant.Directory
	outbox *mailer.Outbox
}

// NewMail returns the mail routes over the directory and the outbox.
func NewMail(reg *tenant.Directory, o *mailer.Outbox) *Mail { return &Mail{reg: reg, outbox: o} }

// Register mounts the routes on g, behind the admin token.
func (m *Mail) Register(g Routes) {
	g.GET("/instances/:domain/outbox", m.list)
	g.POST("/instances/:domain/mail/test", m.test)
	g.POST("/instances/:domain/mail/preview", m.preview)
}

// list answers {"messages": [...]}: each message's id, kind, status
// (queued, sent, failed), attempts, next attempt, last error, created and
// sent times, oldest first; never its recipient or contents.
func (m *Mail) list(c echo.Context) error {
	inst, err := m.reg.Instance(c.Param("domain"))
	if err != nil {
		return err
	}
	ms, err := m.outbox.List(c.Request().Context(), inst.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"messages": ms})
}

// test queues the instance's test message to {"to": address} and
// answers 202 {"id"}: the outbox then shows whether it went.
func (m *Mail) test(c echo.Context) error {
	inst, err := m.reg.Instance(c.Param("domain"))
	if err != nil {
		return err
	}
	var b struct {
		To string `json:"to"`
	}
	if err := decode(c, &b); err != nil {
		return err
	}
	if _, err := mail.ParseAddress(b.To); err != nil {
		return errcode.New(errcode.BadRequest, "to: %q is not an e-mail address", b.To)
	}
	if inst.Settings.SMTP == nil {
		return errcode.New(errcode.BadRequest, "the instance has no smtp setting: set smtp {host, port, tls, username, password, from} first")
	}
	content, err := mailer.Render(inst.Settings.MailTemplates, "test", sampleVars(inst))
	if err != nil {
		return errcode.New(errcode.BadRequest, "mailTemplates.test: %v", err)
	}
	id, err := m.outbox.Enqueue(c.Request().Context(), inst.ID, "test", b.To, content)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]string{"id": id})
}

// preview answers the message {"name"} rendered with sample variables,
// with the template given ({"template": {subject, text, html}}) or the
// instance's: {"subject", "text", "html"}.
func (m *Mail) preview(c echo.Context) error {
	inst, err := m.reg.Instance(c.Param("domain"))
	if err != nil {
		return err
	}
	var b struct {
		Name     string               `json:"name"`
		Template *tenant.MailTemplate `json:"template"`
	}
	if err := decode(c, &b); err != nil {
		return err
	}
	own := inst.Settings.MailTemplates
	if b.Template != nil {
		if err := tenant.CheckMailTemplate(b.Name, *b.Template); err != nil {
			return err
		}
		own = map[string]tenant.MailTemplate{b.Name: *b.Template}
	}
	if _, ok := mailer.Defaults[b.Name]; !ok {
		return errcode.New(errcode.BadRequest, "name: %q is not a message the service sends (%v)", b.Name, tenant.MailMessages)
	}
	content, err := mailer.Render(own, b.Name, sampleVars(inst))
	if err != nil {
		return errcode.New(errcode.BadRequest, "mailTemplates.%s: %v", b.Name, err)
	}
	return c.JSON(http.StatusOK, content)
}

// sampleVars are the variables of a test message and a preview.
func sampleVars(inst *tenant.Instance) mailer.Vars {
	return mailer.Vars{App: inst.App, Domain: inst.Domain, Code: "SAMPLE-CODE", Link: "https://" + inst.Domain + "/example-link",
		Account: "ada@example.com", Minutes: 30}
}
