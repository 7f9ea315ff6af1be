package mail

import (
	"context"
	"errors"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/corehq/core/tenant"
)

// sendTimeout bounds one attempt: the connection, the dialogue and the
// message.
const sendTimeout = 60 * time.Second

// deliver sends one message through the instance's server. permanent
// reports a refusal that a retry would not change (a 5xx answer, an
// address the library cannot write).
func deliver(ctx context.Context, s tenant.SMTP, to string, c Content, messageID string) (permanent bool, err error) {
	m := gomail.NewMsg()
	if err := m.From(s.From); err != nil {
		return true, err
	}
	if err := m.To(to); err != nil {
		return true, err
	}
	m.Subject(c.Subject)
	m.SetMessageIDWithValue(messageID)
	m.SetDate()
	m.SetBodyString(gomail.TypeTextPlain, c.Text)
	if c.HTML != "" {
		m.AddAlternativeString(gomail.TypeTextHTML, c.HTML)
	}
	opts := []gomail.Option{gomail.WithTimeout(sendTimeout)}
	port := s.Port
	switch s.TLS {
	case tenant.TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	case tenant.TLSImplicit:
		opts = append(opts, gomail.WithSSL())
		if port == 0 {
			port = 465
		}
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if port == 0 {
		port = 587
	}
	opts = append(opts, gomail.WithPort(port))
	if s.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(s.Username), gomail.WithPassword(s.Password))
	}
	client, err := gomail.NewClient(s.Host, opts...)
	if err != nil {
		return true, err
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	err = client.DialAndSendWithContext(ctx, m)
	var se *gomail.SendError
	if errors.As(err, &se) && se.ErrorCode() >= 500 && se.ErrorCode() < 600 {
		return true, err
	}
	return false, err
}
