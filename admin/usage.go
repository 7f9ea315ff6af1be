package admin

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/oci"
	"github.com/corehq/core/tenant"
)

// UsageMeter reads what an instance takes up and has done (tenant.Meter).
type UsageMeter interface {
	Usage(ctx context.Context, instanceID string) (tenant.Usage, error)
}

// Usage serves GET /admin/v1/instances/{domain}/usage.
type Usage struct {
	reg   *tenant.Directory
	meter UsageMeter
}

// NewUsage returns the usage route over the directory and the meter.
func NewUsage(reg *tenant.Directory, meter UsageMeter) *Usage {
	return &Usage{reg: reg, meter: meter}
}

// Register mounts the route on g, behind the admin token.
func (u *Usage) Register(g Routes) {
	g.GET("/instances/:domain/usage", u.get)
}

// get answers the instance's usage ({records, storageBytes, requests,
// functionCalls, functionMillis, since}, since in RFC 3339); an unknown
// domain is 404.
func (u *Usage) get(c echo.Context) error {
	inst, err := u.reg.Instance(c.Param("domain"))
	if err != nil {
		return err
	}
	use, err := u.meter.Usage(c.Request().Context(), inst.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, use)
}

// RegistryUsage reads what an app's images take up (*oci.Registry).
type RegistryUsage interface {
	Usage(ctx context.Context, app string) (oci.Usage, error)
}

var _ RegistryUsage = (*oci.Registry)(nil)

// AppUsage serves GET /admin/v1/apps/{app}/usage: what an app takes up
// beyond its instances' records (which the instance route counts).
type AppUsage struct {
	reg    *tenant.Directory
	images RegistryUsage
}

// NewAppUsage returns the app usage route over the directory (which
// knows the apps' releases) and the image registry.
func NewAppUsage(reg *tenant.Directory, images RegistryUsage) *AppUsage {
	return &AppUsage{reg: reg, images: images}
}

// Register mounts the route on g, behind the admin token.
func (u *AppUsage) Register(g Routes) {
	g.GET("/apps/:app/usage", u.get)
}

// appUsage is the answer of GET /admin/v1/apps/{app}/usage.
type appUsage struct {
	App      string    `json:"app"`
	Registry oci.Usage `json:"registry"`
}

// get answers the app's usage: {app, registry: {repositories, manifests,
// tags, blobs, bytes, uploads, uploadBytes}}. An app is known when it has
// a release or the registry holds something of it (images may be pushed
// before any release); another is 404.
func (u *AppUsage) get(c echo.Context) error {
	app := c.Param("app")
	use, err := u.images.Usage(c.Request().Context(), app)
	if err != nil {
		return err
	}
	if use.IsZero() && !u.hasRelease(app) {
		return errcode.New(errcode.NotFound, "unknown app %q: it has no release and no images", app)
	}
	return c.JSON(http.StatusOK, appUsage{App: app, Registry: use})
}

func (u *AppUsage) hasRelease(app string) bool {
	for _, rel := range u.reg.Releases() {
		if rel.App == app {
			return true
		}
	}
	return false
}
