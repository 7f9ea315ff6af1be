package admin

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

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
