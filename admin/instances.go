package admin

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/tenant"
)

// instanceBody is the body of POST /instances: the instance's domain,
// app and release, and any settings (tenant.Settings, by their JSON names).
type instanceBody struct {
	Domain  string `json:"domain"`
	App     string `json:"app"`
	Release string `json:"release"`
	tenant.Settings
}

// instanceView is an instance as the admin API shows it: its settings
// inline. Token is set only in the answers that create it (creation,
// rotation).
type instanceView struct {
	Domain     string `json:"domain"`
	InstanceID string `json:"instanceId"`
	App        string `json:"app"`
	Release    string `json:"release"`
	Realm      string `json:"realm"`
	tenant.Settings
	AdminAccountID string    `json:"adminAccountId"`
	Created        time.Time `json:"created"`
	Token          string    `json:"token,omitempty"`
}

func viewInstance(inst *tenant.Instance) instanceView {
	rel := inst.Release()
	v := instanceView{
		Domain:         inst.Domain,
		InstanceID:     inst.ID,
		App:            inst.App,
		Release:        rel.Name,
		Realm:          rel.Realm,
		Settings:       inst.Settings.Shown(),
		AdminAccountID: inst.AdminAccountID,
		Created:        inst.Created,
	}
	if v.Env == nil {
		v.Env = map[string]string{}
	}
	if v.CORS.AllowedOrigins == nil {
		v.CORS.AllowedOrigins = []string{}
	}
	if v.Introspection == "" {
		v.Introspection = tenant.IntrospectionAdmin
	}
	return v
}

// createInstance answers 201 with the instance and its token, shown once.
func (h *Handler) createInstance(c echo.Context) error {
	var b instanceBody
	if err := decode(c, &b); err != nil {
		return err
	}
	if err := b.Fetch.Check(); err != nil {
		return err
	}
	inst, token, err := h.reg.CreateInstance(c.Request().Context(), tenant.InstanceSpec{
		Domain:   b.Domain,
		App:      b.App,
		Release:  b.Release,
		Settings: b.Settings,
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

// patchInstance applies a PATCH: `release` moves the instance (`force`:
// true moves it even when stored records would not survive, see
// tenant.Directory.UpdateInstance); every other field is a setting (absent or null keeps its value; env replaces
// the whole env, {} clears it).
func (h *Handler) patchInstance(c echo.Context) error {
	var b map[string]json.RawMessage
	if err := decode(c, &b); err != nil {
		return err
	}
	var ch tenant.Change
	if raw, ok := b["release"]; ok && string(raw) != "null" {
		var rel string
		if err := json.Unmarshal(raw, &rel); err != nil {
			return errcode.New(errcode.BadRequest, "release: expected a string")
		}
		ch.Release = &rel
	}
	delete(b, "release")
	if raw, ok := b["force"]; ok {
		if err := json.Unmarshal(raw, &ch.Force); err != nil {
			return errcode.New(errcode.BadRequest, "force: expected true or false")
		}
		delete(b, "force")
	}
	if len(b) > 0 {
		ch.Settings, _ = json.Marshal(b)
	}
	inst, err := h.reg.UpdateInstance(c.Request().Context(), c.Param("domain"), ch)
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
