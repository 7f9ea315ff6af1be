package admin

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/tenant"
)

// Sessions serves POST /admin/v1/instances/{domain}/session: an admin
// session of one instance, for the console. The token acts as the
// instance token (the instance's admin account) on that instance only and
// lasts auth.AdminSessionLifetime; the console asks for a new one before
// it ends, so the instance token is never needed to browse data. It is
// signed like every session token (the key ring, per instance), answered
// once and never stored; retiring its key ends it.
type Sessions struct {
	reg      *tenant.Directory
	accounts *auth.Accounts
}

// NewSessions returns the route over reg, issuing with accounts' signer.
func NewSessions(reg *tenant.Directory, accounts *auth.Accounts) *Sessions {
	return &Sessions{reg: reg, accounts: accounts}
}

// Register mounts the route on g, behind the admin token.
func (s *Sessions) Register(g Routes) {
	g.POST("/instances/:domain/session", s.issue)
}

// sessionView is the answer: the token and when it ends.
type sessionView struct {
	Domain  string    `json:"domain"`
	Token   string    `json:"token"`
	Expires time.Time `json:"expires"`
}

func (s *Sessions) issue(c echo.Context) error {
	inst, err := s.reg.Instance(c.Param("domain"))
	if err != nil {
		return err
	}
	token, claims := s.accounts.Sessions.IssueAdmin(auth.Instance{ID: inst.ID, AdminAccountID: inst.AdminAccountID, TokenHash: inst.TokenHash}, s.accounts.Now())
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusCreated, sessionView{Domain: inst.Domain, Token: token, Expires: time.UnixMicro(claims.ExpiresMicros).UTC()})
}
