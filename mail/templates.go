package mail

import (
	"bytes"
	htmltemplate "html/template"
	"text/template"

	"github.com/corehq/core/tenant"
)

// Vars are the variables a template may use.
type Vars struct {
	// App is the instance's app, Domain its domain.
	App, Domain string
	// Code is a password reset code; Link a verification link.
	Code, Link string
	// Account is the account's username, or its e-mail address.
	Account string
	// Minutes is how long a code or link stays valid.
	Minutes int
}

// Defaults are the texts of each message (tenant.MailMessages) when the
// instance has none of its own.
var Defaults = map[string]tenant.MailTemplate{
	"passwordReset": {
		Subject: "Your {{.App}} password reset code",
		Text: "Someone asked to reset the password of {{.Account}} on {{.Domain}}.\n\n" +
			"Your code: {{.Code}}\n\nIt is valid for {{.Minutes}} minutes and works once. " +
			"If you did not ask, ignore this message: your password stays as it is.\n",
		HTML: "<p>Someone asked to reset the password of {{.Account}} on {{.Domain}}.</p>" +
			"<p>Your code: <b>{{.Code}}</b></p><p>It is valid for {{.Minutes}} minutes and works once. " +
			"If you did not ask, ignore this message: your password stays as it is.</p>",
	},
	"emailVerification": {
		Subject: "Confirm your e-mail address for {{.App}}",
		Text: "Confirm that {{.Account}} is your address on {{.Domain}} by opening this link:\n\n{{.Link}}\n\n" +
			"It is valid for {{.Minutes}} minutes.\n",
		HTML: "<p>Confirm that {{.Account}} is your address on {{.Domain}} by opening this link:</p>" +
			"<p><a href=\"{{.Link}}\">{{.Link}}</a></p><p>It is valid for {{.Minutes}} minutes.</p>",
	},
	"test": {
		Subject: "A test message from {{.App}}",
		Text:    "The mail settings of {{.Domain}} work.\n",
		HTML:    "<p>The mail settings of {{.Domain}} work.</p>",
	},
}

// Content is a rendered message.
type Content struct {
	Subject string `json:"subject"`
	Text    string `json:"text"`
	HTML    string `json:"html"`
}

// Render renders the message name with the instance's template (the
// defaults for its empty parts).
func Render(own map[string]tenant.MailTemplate, name string, v Vars) (Content, error) {
	t := Defaults[name]
	if o, ok := own[name]; ok {
		if o.Subject != "" {
			t.Subject = o.Subject
		}
		if o.Text != "" {
			t.Text = o.Text
		}
		if o.HTML != "" {
			t.HTML = o.HTML
		}
	}
	var c Content
	for _, p := range []struct {
		src string
		dst *string
	}{{t.Subject, &c.Subject}, {t.Text, &c.Text}} {
		tt, err := template.New(name).Option("missingkey=error").Parse(p.src)
		if err != nil {
			return c, err
		}
		var b bytes.Buffer
		if err := tt.Execute(&b, v); err != nil {
			return c, err
		}
		*p.dst = b.String()
	}
	ht, err := htmltemplate.New(name).Option("missingkey=error").Parse(t.HTML)
	if err != nil {
		return c, err
	}
	var b bytes.Buffer
	if err := ht.Execute(&b, v); err != nil {
		return c, err
	}
	c.HTML = b.String()
	return c, nil
}
