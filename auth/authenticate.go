package auth

import (
	"context"
	"errors"
	"time"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
)

// Instance is what authentication knows of an instance: its id (session
// tokens are signed per instance), the SHA-256 of its instance token, and
// the account that token acts as, and how long a session may go unused
// (0: no idle expiry; see checkIdle).
type Instance struct {
	ID                 string
	TokenHash          [32]byte
	AdminAccountID     string
	SessionIdleTimeout time.Duration
}

// ErrUnusable: the account is missing, trashed or disabled.
var ErrUnusable = errors.New("auth: the account is missing, trashed or disabled")

// Usable reports whether an account may act: it is not trashed and not
// disabled. It is the one rule for sessions, logins and the calls a
// webhook makes as its account.
func Usable(acct *store.Record) bool {
	return acct.Trashed == nil && acct.Fields["enabled"] != false
}

// Authenticate returns the principal an authorization header value makes
// on inst: the instance token (or an admin session, Sessions.IssueAdmin,
// which acts as it), a live session of one of its usable accounts, or
// nobody (no token: Anonymous; what an anonymous caller may
// do is decided where the operation is known, in gql). A token that is
// present but invalid is UNAUTHENTICATED.
func (a *Accounts) Authenticate(ctx context.Context, st store.Store, inst Instance, header string) (Principal, error) {
	token := BearerToken(header)
	switch {
	case token == "":
		return Principal{Kind: Anonymous}, nil
	case IsSessionToken(token):
		claims, err := a.Sessions.Parse(inst.ID, token, a.Now())
		if err != nil {
			return Principal{}, errcode.New(errcode.Unauthenticated, "invalid or expired session token")
		}
		acct, err := st.Get(ctx, inst.ID, "Account", claims.Account)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (!Usable(acct) || Revoked(acct, claims))) {
			return Principal{}, errcode.New(errcode.Unauthenticated, "invalid or expired session token")
		}
		if err != nil {
			return Principal{}, errcode.Wrap(errcode.Unavailable, err, "the store is unavailable; try again")
		}
		if claims.Admin {
			// An admin session (the console's) acts as the instance token,
			// for the instance's admin account only, while that token is the
			// one it was issued under; it has no idle expiry (it lasts
			// minutes).
			if claims.Account != inst.AdminAccountID || claims.TokenTag != tokenTag(inst.TokenHash) {
				return Principal{}, errcode.New(errcode.Unauthenticated, "invalid or expired session token")
			}
			return Principal{Kind: InstanceAdmin, AccountID: claims.Account}, nil
		}
		if err := checkIdle(ctx, st, inst, acct, claims, a.Now()); err != nil {
			return Principal{}, err
		}
		return Principal{Kind: User, AccountID: claims.Account, Session: claims.Session}, nil
	case TokenMatches(token, inst.TokenHash):
		return Principal{Kind: InstanceAdmin, AccountID: inst.AdminAccountID}, nil
	}
	return Principal{}, errcode.New(errcode.Unauthenticated, "invalid token")
}

// SessionAs issues a session of the account accountID of inst, lasting
// lifetime, for calls made on the account's behalf (a webhook runs as its
// `as` account, and its function may call back with the token). The
// instance's admin account acts as the instance token does. An account
// that is not Usable is ErrUnusable; a store failure is UNAVAILABLE.
func (a *Accounts) SessionAs(ctx context.Context, st store.Store, inst Instance, accountID string, lifetime time.Duration) (Principal, string, error) {
	acct, err := st.Get(ctx, inst.ID, "Account", accountID)
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && !Usable(acct)):
		return Principal{}, "", ErrUnusable
	case err != nil:
		return Principal{}, "", errcode.Wrap(errcode.Unavailable, err, "the store is unavailable; try again")
	}
	token, claims := a.Sessions.Issue(inst.ID, accountID, a.Now(), lifetime)
	p := Principal{Kind: User, AccountID: accountID, Session: claims.Session}
	if accountID == inst.AdminAccountID {
		p.Kind = InstanceAdmin
	}
	return p, token, nil
}
