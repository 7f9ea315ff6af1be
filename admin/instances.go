package admin

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/tenant"
)

// instanceBody is the body of POST /instances.
type instanceBody struct {
	Domain                string            `json:"domain"`
	App                   string            `json:"app"`
	Release               string            `json:"release"`
	AnonymousRequests     bool              `json:"anonymousRequests"`
	AnonymousRegistration bool              `json:"anonymousRegistration"`
	Env                   map[string]string `json:"env"`
}

// patchBody is the body of PATCH /instances/{domain}: absent (or null)
// fields keep their value; env replaces the whole env ({} clears it).
type patchBody struct {
	Release               *string           `json:"release"`
	AnonymousRequests     *bool             `json:"anonymousRequests"`
	AnonymousRegistration *bool             `json:"anonymousRegistration"`
	Env                   map[string]string `json:"env"`
}

// instanceView is an instance as the admin API shows it. Token is set only
// in the answers that create it (creation, rotation).
type instanceView struct {
	Domain                string            `json:"domain"`
	InstanceID            string            `json:"instanceId"`
	App                   string            `json:"app"`
	Release               string            `json:"release"`
	Realm                 string            `json:"realm"`
	AnonymousRequests     bool              `json:"anonymousRequests"`
	AnonymousRegistration bool              `json:"anonymousRegistration"`
	Env                   map[string]string `json:"env"`
	AdminAccountID        string            `json:"adminAccountId"`
	Created               time.Time         `json:"created"`
	Token                 string            `json:"token,omitempty"`
}

func viewInstance(inst *tenant.Instance) instanceView {
	rel := inst.Release()
	env := inst.Settings.Env
	if env == nil {
		env = map[string]string{}
	}
	return instanceView{
		Domain:                inst.Domain,
		InstanceID:            inst.ID,
		App:                   inst.App,
		Release:               rel.Name,
		Realm:                 rel.Realm,
		AnonymousRequests:     inst.Settings.AnonymousRequests,
		AnonymousRegistration: inst.Settings.AnonymousRegistration,
		Env:                   env,
		AdminAccountID:        inst.AdminAccountID,
		Created:               inst.Created,
	}
}

// createInstance answers 201 with the instance and its token, shown once.
func (h *Handler) createInstance(c echo.Context) error {
	var b instanceBody
	if err := decode(c, &b); err != nil {
		return err
	}
	inst, token, err := h.reg.CreateInstance(c.Request().Context(), tenant.InstanceSpec{
		Domain:  b.Domain,
		App:     b.App,
		Release: b.Release,
		Settings: tenant.Settings{
			AnonymousRequests:     b.AnonymousRequests,
			AnonymousRegistration: b.AnonymousRegistration,
			Env:                   b.Env,
		},
	})
	if err != nil {
		return err
	}
	v := viewInstance(inst)
	v.Token = token
	return c.JSON(http.StatusCreated, v)
}

func (h *Handler) listInstances(c echo.Context) error {
	views := []instanceView{}
	for _, inst := range h.reg.Instances() {
		views = append(views, viewInstance(inst))
	}
	return c.JSON(http.StatusOK, map[string]any{"instances": views})
}

func (h *Handler) getInstance(c echo.Context) error {
	inst, err := h.reg.Instance(c.Param("domain"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewInstance(inst))
}

func (h *Handler) patchInstance(c echo.Context) error {
	var b patchBody
	if err := decode(c, &b); err != nil {
		return err
	}
	inst, err := h.reg.UpdateInstance(c.Request().Context(), c.Param("domain"), tenant.Change{
		Release:               b.Release,
		AnonymousRequests:     b.AnonymousRequests,
		AnonymousRegistration: b.AnonymousRegistration,
		Env:                   b.Env,
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewInstance(inst))
}

// deleteInstance answers the instance as it was.
func (h *Handler) deleteInstance(c echo.Context) error {
	inst, err := h.reg.DeleteInstance(c.Request().Context(), c.Param("domain"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewInstance(inst))
}

// rotateToken answers the instance with its new token; the old one stops
// working.
func (h *Handler) rotateToken(c echo.Context) error {
	inst, token, err := h.reg.RotateToken(c.Request().Context(), c.Param("domain"))
	if err != nil {
		return err
	}
	v := viewInstance(inst)
	v.Token = token
	return c.JSON(http.StatusOK, v)
}
