package gql

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// Stable login error codes (AccessToken.errorCode).
const (
	loginInvalid  = "INVALID_CREDENTIALS"
	loginDisabled = "ACCOUNT_DISABLED"
)

// accessToken is the source of an AccessToken.
type accessToken struct {
	token     string
	expires   int64
	errorCode string
	errorMsg  string
}

// newAccessTokenObject returns AccessToken, the answer of a login. Its
// core is always null (as in the service description's samples); it is a
// Json so that a client selects it without a sub-selection.
func newAccessTokenObject(jsonScalar *graphql.Scalar) *graphql.Object {
	str := func(get func(t *accessToken) string) *graphql.Field {
		return &graphql.Field{Type: graphql.String, Resolve: func(p graphql.ResolveParams) (any, error) {
			return nullable(get(p.Source.(*accessToken))), nil
		}}
	}
	return graphql.NewObject(graphql.ObjectConfig{
		Name:        "AccessToken",
		Description: "The answer of a login: a session token, or an error code.",
		Fields: graphql.Fields{
			"core": &graphql.Field{Type: jsonScalar, Description: "Always null.", Resolve: func(graphql.ResolveParams) (any, error) {
				return nil, nil
			}},
			"sessionToken": str(func(t *accessToken) string { return t.token }),
			"sessionExpires": &graphql.Field{Type: graphql.Int, Description: "Unix time in seconds.", Resolve: func(p graphql.ResolveParams) (any, error) {
				if t := p.Source.(*accessToken); t.token != "" {
					return t.expires, nil
				}
				return nil, nil
			}},
			"errorCode": str(func(t *accessToken) string { return t.errorCode }),
			"errorMsg":  str(func(t *accessToken) string { return t.errorMsg }),
		},
	})
}

// loginField returns login (by username) or loginByEmail: the name
// argument (username or email) and the password, both required.
func (b *builder) loginField(name, description string, byEmail bool) *graphql.Field {
	return &graphql.Field{
		Type:        b.accessToken,
		Description: description,
		Args: graphql.FieldConfigArgument{
			name:       &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.String)},
			"password": &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.String)},
		},
		Resolve: resolveLogin(byEmail),
	}
}

// resolveLogin answers login (by username) and loginByEmail. An unknown
// user and a wrong password give the same answer in the same time: a
// dummy hash is verified for unknown users. Failures are throttled per
// client address, per address and account name, and per account name
// (auth.Throttle), before the account is looked up, so that a throttled
// answer is the same whether it exists or not.
func resolveLogin(byEmail bool) graphql.FieldResolveFn {
	return func(p graphql.ResolveParams) (any, error) {
		c := callFrom(p.Context)
		a := c.Accounts
		field, name := "username", "username"
		if byEmail {
			field, name = "emails", "email"
		}
		id, _ := p.Args[name].(string)
		pw, _ := p.Args["password"].(string)
		if len(pw) > auth.MaxPasswordBytes {
			return nil, errcode.New(errcode.BadRequest, "the password is longer than %d bytes", auth.MaxPasswordBytes)
		}
		accountKey := c.Instance.ID + "\x00" + field + "\x00" + strings.ToLower(id)
		clientKey := c.Instance.ID + "\x00" + auth.ClientAddress(c.ClientIP)
		done, wait := a.Throttle.Begin(p.Context, accountKey, clientKey)
		if wait > 0 {
			secs := int(math.Ceil(wait.Seconds()))
			e := errcode.New(errcode.RateLimited, "too many failed logins; try again in %d seconds", secs)
			e.Extensions = map[string]any{"retryAfter": secs}
			return nil, e
		}
		failed := false
		// Counted even when the client has gone: the store's count must
		// not depend on the attacker waiting for the answer.
		defer func() { done(context.WithoutCancel(p.Context), failed) }()
		fail := func() (any, error) {
			failed = true
			return &accessToken{errorCode: loginInvalid, errorMsg: "invalid " + name + " or password"}, nil
		}
		recs, err := c.Store.Find(p.Context, c.Instance.ID, &store.Query{
			Type:   "Account",
			Filter: &arcql.Compare{Path: arcql.Path{Parts: []string{field}}, Op: arcql.OpEq, Value: arcql.Value{Kind: arcql.KindString, Str: id}},
			Limit:  1,
		})
		if err != nil {
			return nil, storeError(err)
		}
		if len(recs) == 0 || id == "" {
			if err := a.VerifyUnknown(p.Context, pw); err != nil {
				return nil, err
			}
			return fail()
		}
		acct := recs[0]
		phc, _ := acct.Fields[auth.FieldPassword].(string)
		ok, rehash, err := a.VerifyPassword(p.Context, pw, phc)
		if err != nil {
			return nil, err
		}
		if !ok {
			return fail()
		}
		if acct.Fields["enabled"] == false {
			return &accessToken{errorCode: loginDisabled, errorMsg: "the account is disabled"}, nil
		}
		if c.Instance.Settings.RequireEmailVerification && acct.Fields["verified"] != true {
			return &accessToken{errorCode: loginUnverified, errorMsg: "the account's e-mail address is not verified: follow the link sent to it"}, nil
		}
		if rehash {
			// Parameters were raised since the hash was made: store a new
			// one. The login succeeds whether or not this does.
			if phc, err := a.HashPassword(p.Context, pw); err == nil {
				_, _ = c.write(p.Context, []store.Op{{Kind: store.OpUpsert, Type: "Account", ID: acct.ID,
					Set: map[string]any{auth.FieldPassword: phc}, Now: c.now}})
			}
		}
		token, claims := a.Sessions.Issue(c.Instance.ID, acct.ID, a.Now(), sessionLifetime(c))
		return &accessToken{token: token, expires: claims.ExpiresMicros / 1_000_000}, nil
	}
}

// sessionLifetime is how long the instance's sessions last.
func sessionLifetime(c *call) time.Duration {
	if s := c.Instance.Settings.SessionLifetime; s > 0 {
		return time.Duration(s) * time.Second
	}
	return auth.DefaultSessionLifetime
}

// resolveLogout revokes every session of the caller's account issued
// until now.
func resolveLogout(p graphql.ResolveParams) (any, error) {
	c := callFrom(p.Context)
	if c.Principal.Kind != auth.User {
		return nil, errcode.New(errcode.BadRequest, "logout needs a session token")
	}
	// No quota stops a logout: revoking sessions must always work.
	_, err := c.writeWithin(p.Context, []store.Op{{Kind: store.OpUpsert, Type: "Account", ID: c.Principal.AccountID,
		Set: map[string]any{auth.FieldSessionsAfter: c.Accounts.Now().UnixMicro(), auth.FieldKeepSession: nil}, Now: c.now}}, store.Quota{})
	if err != nil {
		return nil, storeError(err)
	}
	return true, nil
}

// resolveCreateAccount answers createAccount: a new Account with a
// password. The instance token may always; anonymous callers only where
// the instance allows anonymous registration; users only where the
// instance lets users create accounts.
func resolveCreateAccount(p graphql.ResolveParams) (any, error) {
	c := callFrom(p.Context)
	switch c.Principal.Kind {
	case auth.Anonymous:
		if !c.Instance.Settings.AnonymousRegistration {
			return nil, errcode.New(errcode.Forbidden, "this instance does not allow anonymous registration")
		}
	case auth.User:
		if !c.Instance.Settings.UsersMayCreateAccounts {
			return nil, errcode.New(errcode.Forbidden, "this instance does not let users create accounts")
		}
	}
	in, ok := rawArg(p, "value").(map[string]any)
	if !ok {
		return nil, errcode.New(errcode.BadRequest, "value: expected an AccountInput object")
	}
	pw, _ := in["password"].(map[string]any)
	if pw == nil {
		return nil, errcode.New(errcode.BadRequest, "value.password is required")
	}
	if in["username"] == nil && in["emails"] == nil {
		return nil, errcode.New(errcode.BadRequest, "value needs a username or an e-mail address to log in with")
	}
	if core, ok := in["core"].(map[string]any); ok && core["id"] != nil {
		id, _ := core["id"].(string)
		if _, err := c.Store.Get(p.Context, c.Instance.ID, "Account", id); err == nil {
			return nil, errcode.New(errcode.Conflict, "Account %s already exists", id)
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, storeError(err)
		}
	}
	t, _ := c.schema.model.Type("Account")
	u := newUpserter(c, p)
	u.creating = true
	id, err := u.record(t, in, "value", true)
	if err != nil {
		return nil, err
	}
	if c.Principal.Kind == auth.Anonymous {
		// A self-registered account owns its own record.
		u.ops[u.top[0]].CreatedBy = id
	}
	if err := u.checkRefs(p); err != nil {
		return nil, err
	}
	results, err := c.write(p.Context, u.ops)
	if err != nil {
		return nil, storeError(err)
	}
	verifyOnCreate(c, results[u.top[0]].Record)
	return &meta{rec: results[u.top[0]].Record}, nil
}
