package files

import (
	"github.com/labstack/echo/v4"

	"github.com/corehq/core/gql"
	"github.com/corehq/core/server/door"
)

// Handler serves uploads and downloads of files.
type Handler struct {
	engine *gql.Engine
}

// New returns the files door of engine.
func New(engine *gql.Engine) *Handler {
	return &Handler{engine: engine}
}

// Routes lists the paths of the door's requests (each and what is below
// it), whose bodies
// and durations the instance's own bounds govern (the server exempts
// them from its body limit and request time-out).
var Routes = []string{"/upload", "/rest/v1/upload", "/file"}

// Register mounts the door's routes.
func (h *Handler) Register(e *echo.Echo) {
	cors, preflight := door.CORS(h.engine, "POST, OPTIONS")
	for _, p := range []string{"/upload", "/upload/*", "/rest/v1/upload", "/rest/v1/upload/*"} {
		e.POST(p, h.upload, cors, door.Resolve(h.engine))
		e.OPTIONS(p, preflight)
	}
	_, filePreflight := door.CORS(h.engine, "GET, HEAD, OPTIONS")
	e.GET("/file/:name", h.download)
	e.HEAD("/file/:name", h.download)
	e.OPTIONS("/file/:name", filePreflight)
}
