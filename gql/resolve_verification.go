package gql

import (
	"context"
	mailaddr "net/mail"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/graphql-go/graphql"
	"go.uber.org/zap"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/mail"
	"github.com/corehq/core/store"
)

// loginUnverified is the login errorCode of an account whose e-mail
// address is not verified where the instance requires it.
const loginUnverified = "EMAIL_NOT_VERIFIED"

// verificationRoots returns requestEmailVerification and verifyEmail.
func verificationRoots() graphql.Fields {
	str := &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.String)}
	return graphql.Fields{
		"requestEmailVerification": &graphql.Field{
			Type: graphql.NewNonNull(graphql.Boolean),
			Description: "Send a verification link to this e-mail address of an account (a session: of its own account). " +
				"redirectTo, on one of the instance's origins, is where the link leads after. The answer is true either way.",
			Args:    graphql.FieldConfigArgument{"email": str, "redirectTo": &graphql.ArgumentConfig{Type: graphql.String}},
			Resolve: resolveRequestEmailVerification,
		},
		"requestEmailChange": &graphql.Field{
			Type: graphql.NewNonNull(graphql.Boolean),
			Description: "Send a verification link to a new e-mail address of the caller's account; it replaces the account's " +
				"addresses once the link is followed. redirectTo as for requestEmailVerification.",
			Args:    graphql.FieldConfigArgument{"email": str, "redirectTo": &graphql.ArgumentConfig{Type: graphql.String}},
			Resolve: resolveRequestEmailChange,
		},
		"verifyEmail": &graphql.Field{
			Type:        graphql.String,
			Description: "Use a verification link's token: the account's address is verified. Answers where to redirect, or null.",
			Args:        graphql.FieldConfigArgument{"token": str},
			Resolve:     resolveVerifyEmail,
		},
	}
}

// canSendLinks reports why the instance cannot send links by mail, nil
// when it can.
func canSendLinks(c *call) error {
	if c.Instance.Settings.SMTP == nil || c.outbox == nil {
		return errcode.New(errcode.BadRequest, "this instance sends no mail: its operator sets smtp first")
	}
	if c.Instance.Settings.PublicURL == "" {
		return errcode.New(errcode.BadRequest, "this instance has no publicUrl for the links it sends: its operator sets it first")
	}
	return nil
}

// resolveRequestEmailVerification answers true at once, and queues the
// link after the answer (as requestPasswordReset does) when the address
// is an account's (a session's own).
func resolveRequestEmailVerification(p graphql.ResolveParams) (any, error) {
	email, _ := p.Args["email"].(string)
	redirect, _ := p.Args["redirectTo"].(string)
	return requestEmailVerification(p, email, redirect)
}

// requestEmailVerification is requestEmailVerification's work, also done
// by an upsert of EmailVerification (mail_requests.go).
func requestEmailVerification(p graphql.ResolveParams, email, redirect string) (any, error) {
	c := callFrom(p.Context)
	email = strings.TrimSpace(email)
	if email == "" || len(email) > 320 {
		return nil, errcode.New(errcode.BadRequest, "email: an e-mail address is required")
	}
	if redirect != "" && !c.Instance.Settings.AllowsRedirect(redirect) {
		return nil, errcode.New(errcode.BadRequest, "redirectTo must be a URL on one of the instance's origins (cors.allowedOrigins)")
	}
	if err := canSendLinks(c); err != nil {
		return nil, err
	}
	return throttled(p, "verify", strings.ToLower(email), true, func() (bool, error) {
		sendLater(c, "verification", func(ctx context.Context) error {
			acct, err := accountByEmail(ctx, c, email)
			if err != nil || acct == nil || c.Principal.Kind == auth.User && acct.ID != c.Principal.AccountID {
				return err
			}
			return sendLink(ctx, c, auth.Code{Account: acct.ID, Email: email, RedirectTo: redirect})
		})
		return true, nil
	})
}

// resolveRequestEmailChange sends a session's new address a link; the
// account's addresses change only when it is followed (verifyEmail).
func resolveRequestEmailChange(p graphql.ResolveParams) (any, error) {
	c := callFrom(p.Context)
	if c.Principal.Kind != auth.User {
		return nil, errcode.New(errcode.BadRequest, "requestEmailChange needs a session token (the instance token sets addresses with upsert)")
	}
	email, _ := p.Args["email"].(string)
	redirect, _ := p.Args["redirectTo"].(string)
	if _, err := mailaddr.ParseAddress(email); err != nil || len(email) > 320 || strings.ContainsAny(email, "<>") {
		return nil, errcode.New(errcode.BadRequest, "email: %q is not an e-mail address", email)
	}
	if redirect != "" && !c.Instance.Settings.AllowsRedirect(redirect) {
		return nil, errcode.New(errcode.BadRequest, "redirectTo must be a URL on one of the instance's origins (cors.allowedOrigins)")
	}
	if err := canSendLinks(c); err != nil {
		return nil, err
	}
	return throttled(p, "verify", c.Principal.AccountID, true, func() (bool, error) {
		return true, sendLink(p.Context, c, auth.Code{Account: c.Principal.AccountID, Email: email, RedirectTo: redirect, Change: true})
	})
}

// sendLater does the account's part of a request after its answer, so
// that the answer's time does not tell whether the account exists.
func sendLater(c *call, what string, send func(ctx context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	go func() {
		defer cancel()
		if err := send(ctx); err != nil {
			c.log.Warn("sending a "+what+" failed", zap.String("domain", c.Instance.Domain), zap.Error(err))
		}
	}()
}

// sendLink queues a verification link of vc.Email for vc.Account.
func sendLink(ctx context.Context, c *call, vc auth.Code) error {
	token, err := auth.IssueCode(ctx, c.Store, auth.PurposeVerify, c.Instance.ID, vc, c.Accounts.Now(), auth.DefaultVerifyLifetime)
	if err != nil {
		return err
	}
	link := strings.TrimSuffix(c.Instance.Settings.PublicURL, "/") + "/email/verify/" + url.PathEscape(c.Instance.Domain) + "?token=" + url.QueryEscape(token)
	content, err := mail.Render(c.Instance.Settings.MailTemplates, "emailVerification", mail.Vars{
		App: c.Instance.App, Domain: c.Instance.Domain, Link: link, Account: vc.Email,
		Minutes: int(auth.DefaultVerifyLifetime / time.Minute)})
	if err != nil {
		return err
	}
	_, err = c.outbox.Enqueue(ctx, c.Instance.ID, "emailVerification", vc.Email, content)
	return err
}

// verifyOnCreate sends a new account with an e-mail address its
// verification, where the instance requires verification and can send.
func verifyOnCreate(c *call, acct *store.Record) {
	emails, _ := acct.Fields["emails"].([]any)
	if !c.Instance.Settings.RequireEmailVerification || len(emails) == 0 || canSendLinks(c) != nil {
		return
	}
	email, _ := emails[0].(string)
	sendLater(c, "verification", func(ctx context.Context) error { return sendLink(ctx, c, auth.Code{Account: acct.ID, Email: email}) })
}

// resolveVerifyEmail uses a verification token: the account is marked
// verified when the address is still one of its own. It answers the
// link's redirectTo while the instance still allows it, else null.
func resolveVerifyEmail(p graphql.ResolveParams) (any, error) {
	c := callFrom(p.Context)
	token, _ := p.Args["token"].(string)
	vc, err := auth.RedeemCode(p.Context, c.Store, auth.PurposeVerify, c.Instance.ID, strings.TrimSpace(token), c.Accounts.Now(), auth.ErrVerifyToken)
	if err != nil {
		return nil, err
	}
	acct, err := c.Store.Get(p.Context, c.Instance.ID, "Account", vc.Account)
	if err != nil {
		return nil, auth.ErrVerifyToken
	}
	set := map[string]any{"verified": true}
	if vc.Change {
		set["emails"] = []any{vc.Email}
	} else if emails, _ := acct.Fields["emails"].([]any); !slices.Contains(emails, any(vc.Email)) {
		return nil, auth.ErrVerifyToken
	}
	if _, err := c.writeWithin(p.Context, []store.Op{{Kind: store.OpUpsert, Type: "Account", ID: acct.ID, Now: c.now,
		Set: set}}, store.Quota{}); err != nil {
		return nil, storeError(err)
	}
	if vc.RedirectTo != "" && c.Instance.Settings.AllowsRedirect(vc.RedirectTo) {
		return vc.RedirectTo, nil
	}
	return nil, nil
}
