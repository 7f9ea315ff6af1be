package admin

import (
	"net/http"
	"sort"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/hooks"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// Hooks serves GET /admin/v1/instances/{domain}/hooks: an instance's
// event hooks (never their secrets) with their delivery state and log.
type Hooks struct {
	reg *tenant.Directory
	st  store.Store
}

// NewHooks returns the route over the directory and the store.
func NewHooks(reg *tenant.Directory, st store.Store) *Hooks { return &Hooks{reg: reg, st: st} }

// Register mounts the route on g, behind the admin token.
func (h *Hooks) Register(g Routes) {
	g.GET("/instances/:domain/hooks", h.list)
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
