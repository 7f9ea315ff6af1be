package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/oci"
)

// RegistryTokens issues, lists and revokes the publishing tokens of the
// function image registry (*oci.Tokens).
type RegistryTokens interface {
	Issue(ctx context.Context, app, name string) (oci.Token, string, error)
	List(ctx context.Context, app string) ([]oci.Token, error)
	Revoke(ctx context.Context, app, id string) (oci.Token, error)
}

// RegistryApps reads and changes an app's registry settings and lists
// its function images (*oci.Registry).
type RegistryApps interface {
	Settings(ctx context.Context, app string) (oci.Settings, error)
	SetSettings(ctx context.Context, app string, s oci.Settings) error
	Functions(ctx context.Context, app string) ([]oci.Function, error)
}

// RegistryCollector collects the registry's garbage (*oci.Registry).
type RegistryCollector interface {
	DefaultGCOptions() oci.GCOptions
	Collect(ctx context.Context, opts oci.GCOptions) (oci.GCReport, error)
}

var (
	_ RegistryTokens    = (*oci.Tokens)(nil)
	_ RegistryApps      = (*oci.Registry)(nil)
	_ RegistryCollector = (*oci.Registry)(nil)
)

// OCI serves the admin routes of the function image registry
// (docs/function-images.md): publishing tokens per app, an app's
// settings and images, and garbage collection.
type OCI struct {
	tokens RegistryTokens
	apps   RegistryApps
	gc     RegistryCollector
}

// NewOCI returns the registry routes.
func NewOCI(tokens RegistryTokens, apps RegistryApps, gc RegistryCollector) *OCI {
	return &OCI{tokens: tokens, apps: apps, gc: gc}
}

// Register mounts the registry routes on g, the /admin/v1 group.
func (r *OCI) Register(g Routes) {
	g.POST("/apps/:app/registry/tokens", r.issueToken)
	g.GET("/apps/:app/registry/tokens", r.listTokens)
	g.DELETE("/apps/:app/registry/tokens/:id", r.revokeToken)
	g.GET("/apps/:app/registry", r.getApp)
	g.PATCH("/apps/:app/registry", r.patchApp)
	g.POST("/registry/gc", r.collect)
}

// issuedToken answers a new token: its text is shown this once, with the
// user name that goes with it.
type issuedToken struct {
	oci.Token
	User   string `json:"user"`
	Secret string `json:"token"`
}

// issueToken makes a publishing token for the app: 201 with the token.
// The body is optional: {"name": "<label>"}.
func (r *OCI) issueToken(c echo.Context) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := decodeOptional(c, &req); err != nil {
		return err
	}
	tok, text, err := r.tokens.Issue(c.Request().Context(), c.Param("app"), req.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, issuedToken{Token: tok, User: oci.User, Secret: text})
}

func (r *OCI) listTokens(c echo.Context) error {
	toks, err := r.tokens.List(c.Request().Context(), c.Param("app"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"app": c.Param("app"), "tokens": toks})
}

// revokeToken removes a token (it stops working at once) and answers it.
func (r *OCI) revokeToken(c echo.Context) error {
	tok, err := r.tokens.Revoke(c.Request().Context(), c.Param("app"), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, tok)
}

// registryView is an app's registry settings and the function versions
// pushed as images.
type registryView struct {
	App string `json:"app"`
	oci.Settings
	Images []oci.Function `json:"images"`
}

func (r *OCI) view(c echo.Context) error {
	ctx, app := c.Request().Context(), c.Param("app")
	s, err := r.apps.Settings(ctx, app)
	if err != nil {
		return err
	}
	fs, err := r.apps.Functions(ctx, app)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, registryView{App: app, Settings: s, Images: fs})
}

func (r *OCI) getApp(c echo.Context) error { return r.view(c) }

// patchApp changes the settings the body names: {"allowTagOverwrite"}.
func (r *OCI) patchApp(c echo.Context) error {
	var req struct {
		AllowTagOverwrite *bool `json:"allowTagOverwrite"`
	}
	if err := decode(c, &req); err != nil {
		return err
	}
	ctx, app := c.Request().Context(), c.Param("app")
	s, err := r.apps.Settings(ctx, app)
	if err != nil {
		return err
	}
	if req.AllowTagOverwrite != nil {
		s.AllowTagOverwrite = *req.AllowTagOverwrite
	}
	if err := r.apps.SetSettings(ctx, app, s); err != nil {
		return err
	}
	return r.view(c)
}

// collect runs a garbage collection now and answers what it removed. The
// body is optional: {"grace": "1h", "dryRun": true}.
func (r *OCI) collect(c echo.Context) error {
	var req struct {
		Grace  *string `json:"grace"`
		DryRun bool    `json:"dryRun"`
	}
	if err := decodeOptional(c, &req); err != nil {
		return err
	}
	opts := r.gc.DefaultGCOptions()
	opts.DryRun = req.DryRun
	if req.Grace != nil {
		d, err := time.ParseDuration(*req.Grace)
		if err != nil || d < 0 {
			return errcode.New(errcode.BadRequest, "grace: a duration such as \"1h\" or \"0s\", not negative")
		}
		opts.Grace = d
	}
	// A collection walks the whole registry: like an export, it takes as
	// long as the data does, not the request time-out (longRunning).
	rep, err := r.gc.Collect(longRunning(c), opts)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}

// decodeOptional is decode for a body that may be left out.
func decodeOptional(c echo.Context, v any) error {
	if c.Request().ContentLength == 0 {
		return nil
	}
	return decode(c, v)
}
