package images

import (
	"context"
	"errors"
	"fmt"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/store"
)

// ErrNoEngine: a function version is a container image and no container
// engine is configured. Returned wrapped with a *fn.FuncError (code
// NO_CONTAINER_ENGINE) that tells the caller so.
var ErrNoEngine = errors.New("images: no container engine is configured")

// FunctionImages finds what the last image push of a function version
// left (*Registry).
type FunctionImages interface {
	Function(ctx context.Context, app, name, version string) (Function, error)
}

// Runtime is the fn.Runtime of a service with the registry: a version
// with a published package (from the admin API or a JavaScript image)
// runs on the embedded JavaScript runtime; a version whose last push was
// a container image runs on the container engine. Without an engine,
// calling such a version answers NO_CONTAINER_ENGINE, saying so.
type Runtime struct {
	js     fn.Runtime
	images FunctionImages
	engine fn.Runtime // nil: none configured
}

var _ fn.Runtime = (*Runtime)(nil)

// NewRuntime returns the runtime over the JavaScript runtime, the
// registry's function images and a container engine (nil for none, the
// default).
func NewRuntime(js fn.Runtime, images FunctionImages, engine fn.Runtime) *Runtime {
	return &Runtime{js: js, images: images, engine: engine}
}

// Invoke runs a call (fn.Runtime). The JavaScript runtime is asked
// first: its packages are cached, so the common call costs no more than
// before; only a version it does not have is looked up among the images.
func (r *Runtime) Invoke(ctx context.Context, inv fn.Invocation) (fn.Result, error) {
	res, err := r.js.Invoke(ctx, inv)
	if !errors.Is(err, fn.ErrNotPublished) {
		return res, err
	}
	f, ferr := r.images.Function(ctx, inv.App, inv.Name, inv.Version)
	switch {
	case errors.Is(ferr, store.ErrNotFound):
		return res, err
	case ferr != nil:
		return fn.Result{}, ferr
	case f.Runtime != RuntimeContainer:
		return res, err // a JavaScript image whose package was deleted since
	case r.engine == nil:
		return fn.Result{}, fmt.Errorf("%w: %w", ErrNoEngine, &fn.FuncError{
			Code: "NO_CONTAINER_ENGINE",
			Message: fmt.Sprintf("function %s version %s is a container image without a JavaScript package "+
				"(/function/package.json or /function/index.js), and this server runs no container engine "+
				"(cored serve --function-gateway)", inv.Name, inv.Version),
		})
	}
	return r.engine.Invoke(ctx, inv)
}
