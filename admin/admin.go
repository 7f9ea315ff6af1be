package admin

import (
	"github.com/corehq/core/tenant"
)

// Handler serves the apps, releases and instances of /admin/v1.
type Handler struct {
	reg *tenant.Directory
}

// New returns the admin API over reg.
func New(reg *tenant.Directory) *Handler {
	return &Handler{reg: reg}
}

// Register mounts the admin routes on g, the /admin/v1 group, every one
// behind the admin token (Routes).
func (h *Handler) Register(g Routes) {
	g.GET("/apps", h.listApps)
	g.PUT("/apps/:app/releases/:release", h.putRelease)
	g.GET("/apps/:app/releases/:release", h.getRelease)
	g.GET("/instances", h.listInstances)
	g.POST("/instances", h.createInstance)
	g.GET("/instances/:domain", h.getInstance)
	g.PATCH("/instances/:domain", h.patchInstance)
	g.DELETE("/instances/:domain", h.deleteInstance)
	g.POST("/instances/:domain/token", h.rotateToken)
	// The function routes (/apps/:app/functions…, /instances/:domain/logs)
	// are Functions.Register's (functions.go).
}
