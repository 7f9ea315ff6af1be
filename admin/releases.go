package admin

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/tenant"
)

// releaseBody is the body of PUT /apps/{app}/releases/{release}.
type releaseBody struct {
	Realm  string  `json:"realm"`
	Schema *string `json:"schema"`
}

// releaseView is a release as the admin API shows it.
type releaseView struct {
	App     string `json:"app"`
	Release string `json:"release"`
	Realm   string `json:"realm"`
	// Types are the application's record types (built-ins left out).
	Types []string `json:"types"`
	// Instances are the domains running the release.
	Instances []string `json:"instances"`
	// Status is what a PUT did: created, replaced or unchanged.
	Status string `json:"status,omitempty"`
	// Schema is the SDL, on GET only.
	Schema string `json:"schema,omitempty"`
}

func (h *Handler) viewRelease(rel *tenant.Release) releaseView {
	v := releaseView{App: rel.App, Release: rel.Name, Realm: rel.Realm, Types: []string{}, Instances: h.reg.Runners(rel)}
	for _, t := range rel.Model.Types {
		if !t.Builtin {
			v.Types = append(v.Types, t.Name)
		}
	}
	if v.Instances == nil {
		v.Instances = []string{}
	}
	return v
}

// putRelease publishes a release: 200 with its summary, 400 listing each
// schema problem with its line and column, 409 when an instance runs a
// different version of it.
func (h *Handler) putRelease(c echo.Context) error {
	var b releaseBody
	if err := decode(c, &b); err != nil {
		return err
	}
	if b.Schema == nil {
		return errcode.New(errcode.BadRequest, `field "schema" is required: the release's SDL`)
	}
	rel, res, err := h.reg.PutRelease(c.Request().Context(), c.Param("app"), c.Param("release"), b.Realm, *b.Schema)
	if err != nil {
		return schemaErrors(c, err)
	}
	v := h.viewRelease(rel)
	v.Status = res.String()
	return c.JSON(http.StatusOK, v)
}

// schemaErrors answers an invalid schema with one envelope entry per
// problem, each with its line and column in extensions; any other error is
// returned for the server to render.
func schemaErrors(c echo.Context, err error) error {
	var errs schema.Errors
	if !errors.As(err, &errs) {
		return err
	}
	env := errcode.Envelope{Errors: make([]errcode.Item, 0, len(errs))}
	for _, e := range errs {
		ext := map[string]any{"code": string(errcode.BadRequest)}
		if e.Line > 0 {
			ext["line"], ext["column"] = e.Line, e.Column
		}
		env.Errors = append(env.Errors, errcode.Item{Message: "invalid schema: " + e.Error(), Extensions: ext})
	}
	return c.JSON(errcode.BadRequest.Status(), env)
}

func (h *Handler) getRelease(c echo.Context) error {
	app, name := c.Param("app"), c.Param("release")
	rel, ok := h.reg.Release(app, name)
	if !ok {
		return errcode.Wrap(errcode.NotFound, tenant.ErrNotFound, "release %s/%s does not exist", app, name)
	}
	v := h.viewRelease(rel)
	v.Schema = rel.SDL
	return c.JSON(http.StatusOK, v)
}

// appView lists an app's releases.
type appView struct {
	App      string        `json:"app"`
	Releases []releaseView `json:"releases"`
}

func (h *Handler) listApps(c echo.Context) error {
	apps := []appView{}
	for _, rel := range h.reg.Releases() { // sorted by app, then release
		if len(apps) == 0 || apps[len(apps)-1].App != rel.App {
			apps = append(apps, appView{App: rel.App})
		}
		a := &apps[len(apps)-1]
		a.Releases = append(a.Releases, h.viewRelease(rel))
	}
	return c.JSON(http.StatusOK, map[string]any{"apps": apps})
}
