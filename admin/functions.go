package admin

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/fn"
	"github.com/corehq/core/tenant"
)

// FunctionStore publishes, lists and deletes function versions
// (*fn.Packages).
type FunctionStore interface {
	Publish(ctx context.Context, app, name, version string, upload []byte) (fn.Info, fn.PutResult, error)
	Info(ctx context.Context, app, name, version string) (fn.Info, error)
	List(ctx context.Context, app string) ([]fn.Info, error)
	Delete(ctx context.Context, app, name, version string) (fn.Info, error)
}

// FunctionLog reads and clears instances' function logs (*fn.Log).
type FunctionLog interface {
	Read(ctx context.Context, instanceID string, limit int) ([]fn.LogEntry, error)
	Clear(ctx context.Context, instanceID string) error
}

// Instances finds an instance by domain (*tenant.Directory).
type Instances interface {
	Instance(domain string) (*tenant.Instance, error)
}

// Functions serves the function routes of /admin/v1 (DESIGN.md,
// "Functions"): publishing a version of a function of an app from a .js
// source or a .zip/.tar.gz package, listing and deleting versions, and
// reading an instance's function log.
type Functions struct {
	pk    FunctionStore
	logs  FunctionLog
	insts Instances
}

// NewFunctions returns the function routes.
func NewFunctions(insts Instances, pk FunctionStore, logs FunctionLog) *Functions {
	return &Functions{pk: pk, logs: logs, insts: insts}
}

// Register mounts the function routes on g, the /admin/v1 group.
func (f *Functions) Register(g Routes) {
	g.GET("/apps/:app/functions", f.list)
	g.GET("/apps/:app/functions/:name", f.versions)
	g.PUT("/apps/:app/functions/:name/:version", f.publish)
	g.GET("/apps/:app/functions/:name/:version", f.get)
	g.DELETE("/apps/:app/functions/:name/:version", f.delete)
	g.GET("/instances/:domain/logs", f.readLog)
	g.DELETE("/instances/:domain/logs", f.clearLog)
}

// functionView is a published version as the admin API shows it. Files
// are listed for one version only, not in listings.
type functionView struct {
	fn.Info
	// Status is what a PUT did: created, replaced or unchanged.
	Status string `json:"status,omitempty"`
}

func listView(i fn.Info) fn.Info {
	i.Files = nil
	return i
}

// publish stores the body as the function version: 200 with the version
// and what was done; 400 naming what is wrong with the package; 413 when
// it is too large.
func (f *Functions) publish(c echo.Context) error {
	body, err := errcode.ReadBody(c.Request(), 0)
	if err != nil {
		return err
	}
	info, res, err := f.pk.Publish(c.Request().Context(), c.Param("app"), c.Param("name"), c.Param("version"), body)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, functionView{Info: info, Status: res.String()})
}

// functionsView lists an app's functions, each with its versions.
type functionsView struct {
	App       string        `json:"app"`
	Functions []versionList `json:"functions"`
}

type versionList struct {
	Name     string    `json:"name"`
	Versions []fn.Info `json:"versions"`
}

func (f *Functions) list(c echo.Context) error {
	infos, err := f.pk.List(c.Request().Context(), c.Param("app"))
	if err != nil {
		return err
	}
	out := functionsView{App: c.Param("app"), Functions: []versionList{}}
	for _, i := range infos { // sorted by name, then version
		if n := len(out.Functions); n == 0 || out.Functions[n-1].Name != i.Name {
			out.Functions = append(out.Functions, versionList{Name: i.Name})
		}
		l := &out.Functions[len(out.Functions)-1]
		l.Versions = append(l.Versions, listView(i))
	}
	return c.JSON(http.StatusOK, out)
}

// versions answers one function's versions; 404 when it has none.
func (f *Functions) versions(c echo.Context) error {
	app, name := c.Param("app"), c.Param("name")
	infos, err := f.pk.List(c.Request().Context(), app)
	if err != nil {
		return err
	}
	out := versionList{Name: name, Versions: []fn.Info{}}
	for _, i := range infos {
		if i.Name == name {
			out.Versions = append(out.Versions, listView(i))
		}
	}
	if len(out.Versions) == 0 {
		return errcode.New(errcode.NotFound, "app %s has no function %s", app, name)
	}
	return c.JSON(http.StatusOK, map[string]any{"app": app, "name": name, "versions": out.Versions})
}

func (f *Functions) get(c echo.Context) error {
	info, err := f.pk.Info(c.Request().Context(), c.Param("app"), c.Param("name"), c.Param("version"))
	if err != nil {
		return notFound(err)
	}
	return c.JSON(http.StatusOK, functionView{Info: info})
}

// delete removes a version and answers it as it was. Fields bound to it
// answer "not published" from then on.
func (f *Functions) delete(c echo.Context) error {
	info, err := f.pk.Delete(c.Request().Context(), c.Param("app"), c.Param("name"), c.Param("version"))
	if err != nil {
		return notFound(err)
	}
	return c.JSON(http.StatusOK, functionView{Info: listView(info)})
}

// notFound gives a missing function version its NOT_FOUND code.
func notFound(err error) error {
	if errors.Is(err, fn.ErrNotPublished) {
		return errcode.Wrap(errcode.NotFound, err, "%s", err.Error())
	}
	return err
}

// Bounds of GET /instances/{domain}/logs?limit=.
const (
	defaultLogLimit = 100
	maxLogLimit     = 10000
)

// logView is an instance's function log, oldest entry first.
type logView struct {
	Domain     string        `json:"domain"`
	InstanceID string        `json:"instanceId"`
	Entries    []fn.LogEntry `json:"entries"`
}

// readLog answers the newest entries of an instance's function log
// (limit, default 100): console output of its functions and the
// runtime's notes (exceptions with their stack, time-outs).
func (f *Functions) readLog(c echo.Context) error {
	inst, err := f.insts.Instance(c.Param("domain"))
	if err != nil {
		return err
	}
	limit := defaultLogLimit
	if s := c.QueryParam("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxLogLimit {
			return errcode.New(errcode.BadRequest, "limit must be a number from 1 to %d", maxLogLimit)
		}
		limit = n
	}
	es, err := f.logs.Read(c.Request().Context(), inst.ID, limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, logView{Domain: inst.Domain, InstanceID: inst.ID, Entries: es})
}

// clearLog empties an instance's function log: 204.
func (f *Functions) clearLog(c echo.Context) error {
	inst, err := f.insts.Instance(c.Param("domain"))
	if err != nil {
		return err
	}
	if err := f.logs.Clear(c.Request().Context(), inst.ID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
