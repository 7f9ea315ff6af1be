package admin

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/backup"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/hooks"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// Transfer serves an instance's export and an import into a new one:
//
//	GET  /admin/v1/instances/{domain}/export   the instance's records (backup.FormatExport)
//	POST /admin/v1/instances/{domain}/import   body: an export; ?app=&release= (default: the
//	                                           exported instance's); 201 {domain, token, records}
type Transfer struct {
	reg *tenant.Directory
	st  store.Store
}

// NewTransfer returns the export and import routes.
func NewTransfer(reg *tenant.Directory, st store.Store) *Transfer { return &Transfer{reg: reg, st: st} }

// Register mounts the routes on g, behind the admin token.
func (t *Transfer) Register(g Routes) {
	g.GET("/instances/:domain/export", t.export)
	g.POST("/instances/:domain/import", t.importInstance)
}

// longRunning lifts the connection's read and write deadlines and the
// request's time-out: an export, an import or a registry collection
// takes as long as the data does. The client going away still ends it (the body or the response
// fails).
func longRunning(c echo.Context) context.Context {
	rc := http.NewResponseController(c.Response().Writer)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	return context.WithoutCancel(c.Request().Context())
}

func (t *Transfer) export(c echo.Context) error {
	inst, err := t.reg.Instance(c.Param("domain"))
	if err != nil {
		return err
	}
	settings := inst.Settings
	settings.Env = nil
	raw, err := json.Marshal(settings)
	if err != nil {
		return err
	}
	exp := backup.Exported{ID: inst.ID, Domain: inst.Domain, App: inst.App, Release: inst.Release().Name,
		AdminAccountID: inst.AdminAccountID, Settings: raw}
	ctx := longRunning(c)
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "application/gzip")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+inst.Domain+`.tar.gz"`)
	c.Response().WriteHeader(http.StatusOK)
	// Past the header the status is sent: a failure cuts the archive
	// short, which its reader finds (no SHA256SUMS).
	return backup.Export(ctx, t.st, exp, c.Response())
}

func (t *Transfer) importInstance(c echo.Context) error {
	ctx := longRunning(c)
	ar, exp, err := backup.OpenImport(c.Request().Body)
	if err != nil {
		return importFailed(err)
	}
	var settings tenant.Settings
	if len(exp.Settings) > 0 {
		if err := json.Unmarshal(exp.Settings, &settings); err != nil {
			return errcode.New(errcode.BadRequest, "the export's settings: %v", err)
		}
	}
	settings.Env = nil
	spec := tenant.InstanceSpec{Domain: c.Param("domain"), App: cmp.Or(c.QueryParam("app"), exp.App),
		Release: cmp.Or(c.QueryParam("release"), exp.Release), Settings: settings}
	// The records must fit the release they are imported into (a missing
	// release is refused by ImportInstance).
	rel, known := t.reg.Release(spec.App, spec.Release)
	var n backup.Imported
	var imported string // the new instance's id
	inst, token, err := t.reg.ImportInstance(ctx, spec, exp.AdminAccountID, func(ctx context.Context, id string) error {
		imported = id
		var eventHooks []string
		var err error
		n, err = backup.Import(ctx, t.st, ar, id, backup.ImportOptions{
			Quota: settings.Quota.Store(),
			Check: func(r *store.Record) error {
				// The records must fit the release they are imported into
				// (a missing release is refused by ImportInstance).
				if known {
					if err := tenant.Accepts(rel.Model, r); err != nil {
						return err
					}
				}
				if r.Type == hooks.Type {
					hooks.Rehome(t.reg.Sealer(), exp.ID, id, r)
					eventHooks = append(eventHooks, r.ID)
				}
				return nil
			},
		})
		if err == nil && n.Files > 0 {
			// Uploads count their files in the instance's counters; an
			// import counts what it put the same way.
			err = t.st.AddCounters(ctx, map[string]map[string]int64{id: {tenant.CounterFiles: n.Files, tenant.CounterFileBytes: n.FileBytes}})
		}
		if err == nil && len(eventHooks) > 0 {
			// The hooks deliver the new instance's changes from its first.
			err = hooks.Noted(ctx, t.st, id, eventHooks)
		}
		return err
	})
	if err != nil {
		if imported != "" {
			err = errors.Join(err, hooks.Forget(context.WithoutCancel(ctx), t.st, imported))
		}
		return importFailed(err)
	}
	return c.JSON(http.StatusCreated, map[string]any{"domain": inst.Domain, "token": token, "records": n.Records, "files": n.Files})
}

// importFailed says why an import failed, naming the record where one is
// to blame; nothing of it was kept.
func importFailed(err error) error {
	var ce *errcode.Error
	var ie *backup.ImportError
	var fe *store.FieldError
	switch {
	case errors.As(err, &ce):
		return err
	case errors.Is(err, store.ErrQuota):
		return errcode.New(errcode.QuotaExceeded, "import refused, nothing kept: %v", err)
	case errors.Is(err, backup.ErrCorrupt), errors.As(err, &ie), errors.As(err, &fe), errors.Is(err, store.ErrExists):
		return errcode.New(errcode.BadRequest, "import failed, nothing kept: %v", err)
	}
	return err
}
