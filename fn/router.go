package fn

import (
	"context"
	"errors"
	"fmt"
)

// ErrNoEngine: a function version is a container image and no container
// engine is configured. Returned wrapped with a *FuncError (code
// NO_CONTAINER_ENGINE) that tells the caller so.
var ErrNoEngine = errors.New("fn: no container engine is configured")

// Containers tells which function versions were last pushed as container
// images (the OCI registry, package oci, answers it). A version it does
// not know is not a container: false and no error.
type Containers interface {
	IsContainer(ctx context.Context, app, name, version string) (bool, error)
}

// Router is the Runtime of a service with the OCI registry: a version
// with a published package (from the admin API or a JavaScript image)
// runs on the embedded JavaScript runtime; a version whose last push was
// a container image runs on the container engine (the Gateway). Without
// an engine, calling such a version answers NO_CONTAINER_ENGINE, saying
// so.
type Router struct {
	js         Runtime
	containers Containers
	engine     Runtime // nil: none configured
}

var _ Runtime = (*Router)(nil)

// NewRouter returns the runtime over the JavaScript runtime, the
// registry's container images and a container engine (nil for none, the
// default).
func NewRouter(js Runtime, containers Containers, engine Runtime) *Router {
	return &Router{js: js, containers: containers, engine: engine}
}

// Invoke runs a call (Runtime). The JavaScript runtime is asked first:
// its packages are cached, so the common call costs no more than before;
// only a version it does not have is looked up among the images.
func (r *Router) Invoke(ctx context.Context, inv Invocation) (Result, error) {
	res, err := r.js.Invoke(ctx, inv)
	if !errors.Is(err, ErrNotPublished) {
		return res, err
	}
	container, cerr := r.containers.IsContainer(ctx, inv.App, inv.Name, inv.Version)
	switch {
	case cerr != nil:
		return Result{}, cerr
	case !container:
		// Never pushed, or a JavaScript image whose package was deleted
		// since.
		return res, err
	case r.engine == nil:
		return Result{}, fmt.Errorf("%w: %w", ErrNoEngine, &FuncError{
			Code: "NO_CONTAINER_ENGINE",
			Message: fmt.Sprintf("function %s version %s is a container image without a JavaScript package "+
				"(/function/package.json or /function/index.js), and this server runs no container engine "+
				"(cored serve --function-gateway)", inv.Name, inv.Version),
		})
	}
	return r.engine.Invoke(ctx, inv)
}
