package gql

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/mail"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// passwordRoots returns the mutations of forgotten and changed passwords:
// requestPasswordReset, resetPassword and changePassword.
func passwordRoots() graphql.Fields {
	str := &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.String)}
	return graphql.Fields{
		"requestPasswordReset": &graphql.Field{
			Type:        graphql.NewNonNull(graphql.Boolean),
			Description: "Send a single-use password reset code to the account with this e-mail address, if there is one. The answer is true either way.",
			Args:        graphql.FieldConfigArgument{"email": str},
			Resolve:     resolveRequestPasswordReset,
		},
		"resetPassword": &graphql.Field{
			Type:        graphql.NewNonNull(graphql.Boolean),
			Description: "Set a new password with a reset code (used once); every session of the account ends.",
			Args:        graphql.FieldConfigArgument{"code": str, "password": str},
			Resolve:     resolveResetPassword,
		},
		"changePassword": &graphql.Field{
			Type:        graphql.NewNonNull(graphql.Boolean),
			Description: "Change the caller's password, given the current one; the account's other sessions end.",
			Args:        graphql.FieldConfigArgument{"currentPassword": str, "newPassword": str},
			Resolve:     resolveChangePassword,
		},
	}
}

// throttled runs an attempt of what under the login throttle's rules
// (per client address, per address and key, per key), with keys of its
// own: counted always when count, else only when it fails. It answers
// RATE_LIMITED, with retryAfter, over the bounds.
func throttled(p graphql.ResolveParams, what, key string, count bool, attempt func() (bool, error)) (any, error) {
	c := callFrom(p.Context)
	done, wait := c.Accounts.Throttle.Begin(p.Context, c.Instance.ID+"\x00"+what+"\x00"+key,
		c.Instance.ID+"\x00"+what+"\x00"+auth.ClientAddress(c.ClientIP))
	if wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		e := errcode.New(errcode.RateLimited, "too many attempts; try again in %d seconds", secs)
		e.Extensions = map[string]any{"retryAfter": secs}
		return nil, e
	}
	failed := count
	defer func() { done(context.WithoutCancel(p.Context), failed) }()
	ok, err := attempt()
	if !ok {
		failed = true
	}
	return ok, err
}

// resolveRequestPasswordReset answers true for every address, known or
// not, at once: the account is looked up and the code sent after the
// answer (mail.Outbox), so that neither the answer nor its time tells
// whether the address has an account. Requests count per address and
// per client address (the login throttle's rules, with keys of their
// own).
func resolveRequestPasswordReset(p graphql.ResolveParams) (any, error) {
	email, _ := p.Args["email"].(string)
	return requestPasswordReset(p, email)
}

// requestPasswordReset is requestPasswordReset's work, also done by an
// upsert of PasswordReminder (mail_requests.go).
func requestPasswordReset(p graphql.ResolveParams, email string) (any, error) {
	c := callFrom(p.Context)
	email = strings.TrimSpace(email)
	if email == "" || len(email) > 320 {
		return nil, errcode.New(errcode.BadRequest, "email: an e-mail address is required")
	}
	if c.Instance.Settings.SMTP == nil || c.outbox == nil {
		return nil, errcode.New(errcode.BadRequest, "this instance sends no mail: its operator sets smtp first")
	}
	return throttled(p, "reset", strings.ToLower(email), true, func() (bool, error) {
		sendLater(c, "password reset code", func(ctx context.Context) error { return sendResetCode(ctx, c, email) })
		return true, nil
	})
}

// sendResetCode queues a reset code for the account with this e-mail
// address, when there is one.
func sendResetCode(ctx context.Context, c *call, email string) error {
	acct, err := accountByEmail(ctx, c, email)
	if err != nil || acct == nil || acct.Fields["enabled"] == false {
		return err
	}
	code, err := auth.IssueCode(ctx, c.Store, auth.PurposeReset, c.Instance.ID, auth.Code{Account: acct.ID}, c.Accounts.Now(), auth.DefaultResetLifetime)
	if err != nil {
		return err
	}
	content, err := mail.Render(c.Instance.Settings.MailTemplates, "passwordReset", mail.Vars{
		App: c.Instance.App, Domain: c.Instance.Domain, Code: code, Account: email,
		Minutes: int(auth.DefaultResetLifetime / time.Minute)})
	if err != nil {
		return err
	}
	_, err = c.outbox.Enqueue(ctx, c.Instance.ID, "passwordReset", email, content)
	return err
}

// accountByEmail returns the account with this e-mail address, or nil.
func accountByEmail(ctx context.Context, c *call, email string) (*store.Record, error) {
	recs, err := c.Store.Find(ctx, c.Instance.ID, &store.Query{
		Type:   "Account",
		Filter: &arcql.Compare{Path: arcql.Path{Parts: []string{"emails"}}, Op: arcql.OpEq, Value: arcql.Value{Kind: arcql.KindString, Str: email}},
		Limit:  1,
	})
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	return recs[0], nil
}

// resolveResetPassword sets the password of the account a reset code was
// sent for, uses the code up and ends every session of the account. A
// wrong, used or expired code is one error (auth.ErrResetCode) and
// changes nothing; wrong codes count against the caller's address.
func resolveResetPassword(p graphql.ResolveParams) (any, error) {
	c := callFrom(p.Context)
	code, _ := p.Args["code"].(string)
	pw, _ := p.Args["password"].(string)
	if err := auth.CheckPassword(pw); err != nil {
		return nil, err
	}
	return throttled(p, "reset-code", "", false, func() (bool, error) {
		phc, err := c.Accounts.HashPassword(p.Context, pw)
		if err != nil {
			return true, err
		}
		rc, err := auth.RedeemCode(p.Context, c.Store, auth.PurposeReset, c.Instance.ID, strings.TrimSpace(code), c.Accounts.Now(), auth.ErrResetCode)
		if err != nil {
			return err != auth.ErrResetCode, err
		}
		return true, setPassword(p.Context, c, rc.Account, phc, "")
	})
}

// setPassword stores a new password hash for the account and ends its
// sessions, all but keep (none when keep is "").
func setPassword(ctx context.Context, c *call, account, phc, keep string) error {
	_, err := c.writeWithin(ctx, []store.Op{{Kind: store.OpUpsert, Type: "Account", ID: account, Now: c.now,
		Set: map[string]any{auth.FieldPassword: phc, auth.FieldSessionsAfter: c.Accounts.Now().UnixMicro(), auth.FieldKeepSession: nullable(keep)}}},
		store.Quota{})
	if err != nil {
		return storeError(err)
	}
	return nil
}

// resolveChangePassword changes a session's own password given the
// current one (failures counted as failed logins of the account are),
// and ends the account's other sessions.
func resolveChangePassword(p graphql.ResolveParams) (any, error) {
	c := callFrom(p.Context)
	if c.Principal.Kind != auth.User {
		return nil, errcode.New(errcode.BadRequest, "changePassword needs a session token (the instance token sets passwords with upsert)")
	}
	current, _ := p.Args["currentPassword"].(string)
	next, _ := p.Args["newPassword"].(string)
	if len(current) > auth.MaxPasswordBytes {
		return nil, errcode.New(errcode.BadRequest, "the password is longer than %d bytes", auth.MaxPasswordBytes)
	}
	if err := auth.CheckPassword(next); err != nil {
		return nil, err
	}
	return throttled(p, "password", c.Principal.AccountID, false, func() (bool, error) {
		acct, err := c.Store.Get(p.Context, c.Instance.ID, "Account", c.Principal.AccountID)
		if err != nil {
			return true, storeError(err)
		}
		phc, _ := acct.Fields[auth.FieldPassword].(string)
		ok, _, err := c.Accounts.VerifyPassword(p.Context, current, phc)
		if err != nil {
			return true, err
		}
		if !ok {
			return false, errcode.New(errcode.Forbidden, "the current password is wrong")
		}
		if phc, err = c.Accounts.HashPassword(p.Context, next); err != nil {
			return true, err
		}
		return true, setPassword(p.Context, c, acct.ID, phc, c.Principal.Session)
	})
}
