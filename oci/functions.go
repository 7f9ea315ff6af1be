package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/store"
)

// docFunction is the store kind of the function versions pushed as
// images, keyed by "<app>/<name>/<version>".
const docFunction = "registry-function"

// The runtimes a pushed image is run by.
const (
	// RuntimeJavaScript: the image holds /function/package.json or
	// /function/index.js, published as the version's package and run by
	// the embedded JavaScript runtime.
	RuntimeJavaScript = "javascript"
	// RuntimeContainer: any other image, run by the configured container
	// engine (Gateway), if any.
	RuntimeContainer = "container"
)

// Function is a function version as its last image push left it.
type Function struct {
	App     string `json:"app"`
	Name    string `json:"name"`
	Version string `json:"version"`
	// Image is the pushed image by digest: {app}/{name}@sha256:….
	Image  string `json:"image"`
	Digest string `json:"digest"`
	// Runtime is RuntimeJavaScript or RuntimeContainer.
	Runtime string `json:"runtime"`
	// Package is the SHA-256 of the package published from a JavaScript
	// image (fn.Info.SHA256), so that removing the image removes that
	// package and not one published later through the admin API.
	Package string    `json:"package,omitempty"`
	Pushed  time.Time `json:"pushed"`
}

func functionKey(app, name, version string) string { return app + "/" + name + "/" + version }

// Function returns what the last push of a version left;
// store.ErrNotFound when no image was pushed for it.
func (r *Registry) Function(ctx context.Context, app, name, version string) (Function, error) {
	raw, err := r.st.GetDoc(ctx, docFunction, functionKey(app, name, version))
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Function{}, err
		}
		return Function{}, fmt.Errorf("oci: reading %s/%s:%s: %w", app, name, version, err)
	}
	var f Function
	if err := json.Unmarshal(raw, &f); err != nil {
		return Function{}, fmt.Errorf("oci: decoding %s/%s:%s: %w", app, name, version, err)
	}
	return f, nil
}

// IsContainer tells whether the last push of a version was a container
// image (fn.Containers).
func (r *Registry) IsContainer(ctx context.Context, app, name, version string) (bool, error) {
	f, err := r.Function(ctx, app, name, version)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil && f.Runtime == RuntimeContainer, err
}

// Functions returns the function versions pushed as images for app,
// sorted by name and version.
func (r *Registry) Functions(ctx context.Context, app string) ([]Function, error) {
	docs, err := r.st.ListDocs(ctx, docFunction)
	if err != nil {
		return nil, fmt.Errorf("oci: listing function images: %w", err)
	}
	out := []Function{}
	for key, raw := range docs {
		if !strings.HasPrefix(key, app+"/") {
			continue
		}
		var f Function
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("oci: decoding %s: %w", key, err)
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Function) int {
		return strings.Compare(a.Name+"\x00"+a.Version, b.Name+"\x00"+b.Version)
	})
	return out, nil
}

func (r *Registry) putFunction(ctx context.Context, f Function) error {
	raw, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("oci: encoding %s/%s:%s: %w", f.App, f.Name, f.Version, err)
	}
	if err := r.st.PutDoc(ctx, docFunction, functionKey(f.App, f.Name, f.Version), raw); err != nil {
		return fmt.Errorf("oci: storing %s/%s:%s: %w", f.App, f.Name, f.Version, err)
	}
	return nil
}

// dropFunction forgets a version's image: its record, and the package
// published from it unless another has replaced that package since.
func (r *Registry) dropFunction(ctx context.Context, f Function) error {
	if err := r.st.DeleteDoc(ctx, docFunction, functionKey(f.App, f.Name, f.Version)); err != nil {
		return fmt.Errorf("oci: deleting %s/%s:%s: %w", f.App, f.Name, f.Version, err)
	}
	if f.Runtime != RuntimeJavaScript {
		return nil
	}
	info, err := r.pk.Info(ctx, f.App, f.Name, f.Version)
	if errors.Is(err, fn.ErrNotPublished) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.SHA256 != f.Package {
		return nil
	}
	if _, err := r.pk.Delete(ctx, f.App, f.Name, f.Version); err != nil && !errors.Is(err, fn.ErrNotPublished) {
		return err
	}
	return nil
}

// dropVersion removes the function version an image push left, if any.
func (r *Registry) dropVersion(ctx context.Context, app, name, version string) error {
	f, err := r.Function(ctx, app, name, version)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return r.dropFunction(ctx, f)
}
