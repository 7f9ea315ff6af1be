package admin

import (
	"github.com/labstack/echo/v4"

	"github.com/corehq/core/tenant"
)

// Handler serves /admin/v1.
type Handler struct {
	reg       *tenant.Registry
	tokenHash [32]byte
}

// New returns the admin API over reg, authorised by the admin token whose
// SHA-256 is tokenHash (see SetupToken).
func New(reg *tenant.Registry, tokenHash [32]byte) *Handler {
	return &Handler{reg: reg, tokenHash: tokenHash}
}

// Register mounts the admin routes on g, the /admin/v1 group, every one
// behind the admin token. The token check is attached per route rather
// than with g.Use, which would make echo answer 404 instead of 405 for a
// wrong method on an admin path.
func (h *Handler) Register(g *echo.Group) {
	g.GET("/apps", h.listApps, h.authorize)
	g.PUT("/apps/:app/releases/:release", h.putRelease, h.authorize)
	g.GET("/apps/:app/releases/:release", h.getRelease, h.authorize)
	g.GET("/instances", h.listInstances, h.authorize)
	g.POST("/instances", h.createInstance, h.authorize)
	g.GET("/instances/:domain", h.getInstance, h.authorize)
	g.PATCH("/instances/:domain", h.patchInstance, h.authorize)
	g.DELETE("/instances/:domain", h.deleteInstance, h.authorize)
	g.POST("/instances/:domain/token", h.rotateToken, h.authorize)
	// The function routes (/apps/:app/functions…, /instances/:domain/logs)
	// are Functions.Register's (functions.go).
}
