package admin

import (
	"context"
	"errors"
	"net/http"
	"sort"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/hooks"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// Hooks serves GET /admin/v1/instances/{domain}/hooks: an instance's
// event hooks (never their secrets) with their delivery state and log;
// and, with a HookTester, POST /admin/v1/instances/{domain}/hooks/{id}/test:
// a test event posted to the hook now, answered with how it went (an
// attempt as the delivery log shows it; 404 for an unknown hook).
type Hooks struct {
	reg    *tenant.Directory
	st     store.Store
	tester HookTester
}

// HookTester posts test events (hooks.Service).
type HookTester interface {
	SendTest(ctx context.Context, inst *tenant.Instance, hookID string) (hooks.Attempt, error)
}

// NewHooks returns the routes over the directory, the store and the
// tester (nil: no test route).
func NewHooks(reg *tenant.Directory, st store.Store, tester HookTester) *Hooks {
	return &Hooks{reg: reg, st: st, tester: tester}
}

// Register mounts the routes on g, behind the admin token.
func (h *Hooks) Register(g Routes) {
	g.GET("/instances/:domain/hooks", h.list)
	if h.tester != nil {
		g.POST("/instances/:domain/hooks/:id/test", h.test)
	}
}

// test posts a test event to one hook.
func (h *Hooks) test(c echo.Context) error {
	inst, err := h.reg.Instance(c.Param("domain"))
	if err != nil {
		return err
	}
	a, err := h.tester.SendTest(c.Request().Context(), inst, c.Param("id"))
	if errors.Is(err, hooks.ErrNoHook) {
		return errcode.New(errcode.NotFound, "instance %s has no event hook %s", inst.Domain, c.Param("id"))
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

// hookView is one hook as the route shows it.
type hookView struct {
	ID         string   `json:"id"`
	URL        string   `json:"url"`
	Types      []string `json:"types"`
	Operations []string `json:"operations"`
	ArcQL      string   `json:"arcql,omitempty"`
	Enabled    bool     `json:"enabled"`
	LastError  string   `json:"lastError,omitempty"`
	// State is the delivery: cursor, failures, counts and the log of
	// the newest attempts (hooks.State); null before the first scan.
	State *hooks.State `json:"state"`
}

// list answers {hooks: [...]} in id order; an unknown domain is 404.
func (h *Hooks) list(c echo.Context) error {
	inst, err := h.reg.Instance(c.Param("domain"))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	recs, err := h.st.Find(ctx, inst.ID, &store.Query{Type: hooks.Type, IncludeTrashed: true})
	if err != nil {
		return err
	}
	states, err := hooks.States(ctx, h.st, inst.ID)
	if err != nil {
		return err
	}
	out := make([]hookView, 0, len(recs))
	for _, r := range recs {
		hk, _ := hooks.FromRecord(r, func(string) ([]byte, error) { return nil, nil })
		v := hookView{ID: r.ID, URL: hk.URL, Types: hk.Types, Operations: hk.Ops, ArcQL: hk.ArcQL, Enabled: hk.Enabled, State: states[r.ID]}
		v.LastError, _ = r.Fields["lastError"].(string)
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return c.JSON(http.StatusOK, map[string]any{"hooks": out})
}
