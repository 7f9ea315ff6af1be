package tenant

import (
	"errors"
	htmltemplate "html/template"
	"maps"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/corehq/core/errcode"
)

// SMTP is an instance's mail server: where the service sends the
// messages of the instance's accounts (password reset codes, e-mail
// verification links) from its outbox (package mail).
type SMTP struct {
	Host string `json:"host"`
	// Port is the server's port; 0: 587, or 465 with TLS "implicit".
	Port int `json:"port"`
	// TLS is "none", "starttls" (also "", the default: required) or
	// "implicit" (TLS from the first byte, usually port 465).
	TLS      string `json:"tls"`
	Username string `json:"username"`
	// Password is write-only: kept sealed (secrets.go), never shown; a
	// change of the other fields that does not name it keeps it.
	Password string `json:"password,omitempty"`
	// PasswordSet is shown instead of the password: whether one is kept.
	// It is ignored on input.
	PasswordSet bool `json:"passwordSet"`
	// From is the sender, an address or "Name <address>".
	From string `json:"from"`
}

// The values of SMTP.TLS.
const (
	TLSNone     = "none"
	TLSStartTLS = "starttls"
	TLSImplicit = "implicit"
)

// MailTemplate is the text of one kind of message: Go templates
// (text/template for Subject and Text, html/template for HTML) over the
// variables package mail documents ({{.App}}, {{.Domain}}, {{.Code}},
// {{.Link}}, {{.Account}}). An empty part takes the default's.
type MailTemplate struct {
	Subject string `json:"subject"`
	Text    string `json:"text"`
	HTML    string `json:"html"`
}

// Shown returns the settings as the admin API shows them: the SMTP
// password left out (PasswordSet says whether one is kept).
func (s Settings) Shown() Settings {
	s = s.clone()
	if s.SMTP != nil {
		s.SMTP.PasswordSet = s.SMTP.Password != ""
		s.SMTP.Password = ""
	}
	return s
}

// maxTemplateBytes bounds each part of a mail template.
const maxTemplateBytes = 64 << 10

// checkMail reports whether the smtp setting and the mail templates are
// usable: each template parses and names a message the service sends.
func (s Settings) checkMail() error {
	if m := s.SMTP; m != nil {
		m.PasswordSet = false
		if m.Host == "" || strings.ContainsAny(m.Host, " /:@") {
			return errcode.Wrap(errcode.BadRequest, ErrInvalid, "smtp.host must be a host name or address, without port or scheme")
		}
		if m.Port < 0 || m.Port > 65535 {
			return errcode.Wrap(errcode.BadRequest, ErrInvalid, "smtp.port must be between 1 and 65535 (0: 587, or 465 with tls %q)", TLSImplicit)
		}
		switch m.TLS {
		case "", TLSNone, TLSStartTLS, TLSImplicit:
		default:
			return errcode.Wrap(errcode.BadRequest, ErrInvalid, "smtp.tls must be %q, %q or %q", TLSNone, TLSStartTLS, TLSImplicit)
		}
		if _, err := mail.ParseAddress(m.From); err != nil {
			return errcode.Wrap(errcode.BadRequest, ErrInvalid, "smtp.from: %q is not an e-mail address (write ada@example.com or \"Books <ada@example.com>\")", m.From)
		}
	}
	if s.PublicURL != "" {
		u, err := url.Parse(s.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return errcode.Wrap(errcode.BadRequest, ErrInvalid, "publicUrl: %q is not where clients reach the service: write https://host[:port][/path]", s.PublicURL)
		}
	}
	for name, t := range s.MailTemplates {
		if err := CheckMailTemplate(name, t); err != nil {
			return err
		}
	}
	return nil
}

// CheckMailTemplate reports whether t is a usable template of the
// message name: a message the service sends, each part within bounds and
// parsing.
func CheckMailTemplate(name string, t MailTemplate) error {
	if !slices.Contains(MailMessages, name) {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "mailTemplates: %q is not a message the service sends (%s)", name, strings.Join(MailMessages, ", "))
	}
	if len(t.Subject) > maxTemplateBytes || len(t.Text) > maxTemplateBytes || len(t.HTML) > maxTemplateBytes {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "mailTemplates.%s: each part holds at most %d bytes", name, maxTemplateBytes)
	}
	if err := parseTemplate(t); err != nil {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "mailTemplates.%s: %v", name, err)
	}
	return nil
}

// cloneMail copies the smtp setting and the templates so that s shares
// neither with the settings it was copied from.
func (s *Settings) cloneMail() {
	if s.SMTP != nil {
		m := *s.SMTP
		s.SMTP = &m
	}
	s.MailTemplates = maps.Clone(s.MailTemplates)
}

// MailMessages names the messages the service sends, the keys of
// Settings.MailTemplates.
var MailMessages = []string{"passwordReset", "emailVerification", "test"}

// parseTemplate parses each part of t (an empty part is the default's).
// A template may not loop ({{range}}): the variables hold no lists, and
// {{range 1000000000}} would spend unbounded time.
func parseTemplate(t MailTemplate) error {
	for _, part := range []string{t.Subject, t.Text} {
		tt, err := template.New("").Parse(part)
		if err != nil {
			return err
		}
		if err := noLoops(tt.Templates()); err != nil {
			return err
		}
	}
	ht, err := htmltemplate.New("").Parse(t.HTML)
	if err != nil {
		return err
	}
	for _, h := range ht.Templates() {
		if h.Tree != nil && hasRange(h.Tree.Root) {
			return errNoLoops
		}
	}
	return nil
}

var errNoLoops = errors.New("{{range}} is not allowed in a mail template")

func noLoops(ts []*template.Template) error {
	for _, t := range ts {
		if t.Tree != nil && hasRange(t.Tree.Root) {
			return errNoLoops
		}
	}
	return nil
}

// hasRange reports whether a parse tree holds a {{range}} or a
// {{template}} call (which could recurse).
func hasRange(n parse.Node) bool {
	switch n := n.(type) {
	case *parse.RangeNode, *parse.TemplateNode:
		return true
	case *parse.ListNode:
		if n == nil {
			return false
		}
		for _, c := range n.Nodes {
			if hasRange(c) {
				return true
			}
		}
	case *parse.IfNode:
		return hasRange(n.List) || hasRange(n.ElseList)
	case *parse.WithNode:
		return hasRange(n.List) || hasRange(n.ElseList)
	}
	return false
}

// AllowsRedirect reports whether a link the instance sends may lead to
// target: a URL on one of the origins of cors.allowedOrigins ("*" allows
// none: a redirect is allowed only to an origin named).
func (s Settings) AllowsRedirect(target string) bool {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return false
	}
	origin := strings.ToLower(u.Scheme + "://" + u.Host)
	return slices.Contains(s.CORS.AllowedOrigins, origin)
}
