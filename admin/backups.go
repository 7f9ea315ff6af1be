package admin

import (
	"context"
	"errors"
	"net/http"
	"os"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/backup"
	"github.com/corehq/core/errcode"
)

// BackupDir keeps the server's backups (*backup.Dir).
type BackupDir interface {
	Take(ctx context.Context) (backup.Info, error)
	List() ([]backup.Info, error)
	Open(name string) (*os.File, error)
}

var _ BackupDir = (*backup.Dir)(nil)

// Backups serves the backups of the whole service:
//
//	POST /admin/v1/backups         take one now: 201 {name, size, created, sha256}
//	GET  /admin/v1/backups         {"backups": [{name, size, created}, …]}, newest first
//	GET  /admin/v1/backups/{name}  the archive (application/gzip)
type Backups struct{ dir BackupDir }

// NewBackups returns the backup routes over dir.
func NewBackups(dir BackupDir) *Backups { return &Backups{dir: dir} }

// Register mounts the routes on g, behind the admin token.
func (b *Backups) Register(g Routes) {
	g.POST("/backups", b.take)
	g.GET("/backups", b.list)
	g.GET("/backups/:name", b.download)
}

// take takes a backup. It runs to its end even when the request ends
// first (a time-out, a client gone): it is then listed.
func (b *Backups) take(c echo.Context) error {
	done := make(chan struct{})
	var info backup.Info
	var err error
	go func() {
		defer close(done)
		info, err = b.dir.Take(context.WithoutCancel(c.Request().Context()))
	}()
	select {
	case <-done:
	case <-c.Request().Context().Done():
		return errcode.New(errcode.Unavailable, "the request ended before the backup did; it goes on, and GET /admin/v1/backups lists it when done")
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, info)
}

func (b *Backups) list(c echo.Context) error {
	list, err := b.dir.List()
	if err != nil {
		return err
	}
	if list == nil {
		list = []backup.Info{}
	}
	return c.JSON(http.StatusOK, map[string]any{"backups": list})
}

func (b *Backups) download(c echo.Context) error {
	f, err := b.dir.Open(c.Param("name"))
	if errors.Is(err, backup.ErrNoBackup) {
		return errcode.New(errcode.NotFound, "no backup is named %q: GET /admin/v1/backups lists them", c.Param("name"))
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	// An archive may take longer to send than the server's write time-out.
	_ = http.NewResponseController(c.Response().Writer).SetWriteDeadline(time.Time{})
	h := c.Response().Header()
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+fi.Name()+`"`)
	http.ServeContent(c.Response(), c.Request(), fi.Name(), fi.ModTime(), f)
	return nil
}
