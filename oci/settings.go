package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/internal/names"
	"github.com/corehq/core/store"
)

// docSettings is the store kind of the apps' registry settings, keyed by
// app.
const docSettings = "registry-app"

// Settings are an app's registry settings.
type Settings struct {
	// AllowTagOverwrite lets a push replace an existing tag (a function
	// version) with another image. Off by default: a version, once
	// pushed, stays what it is, as a release does once it runs; the push
	// of different content answers TAG_INVALID. Pushing the same image
	// again is always allowed.
	AllowTagOverwrite bool `json:"allowTagOverwrite"`
}

// Settings returns an app's settings (the defaults when none were set).
func (r *Registry) Settings(ctx context.Context, app string) (Settings, error) {
	raw, err := r.st.GetDoc(ctx, docSettings, app)
	if errors.Is(err, store.ErrNotFound) {
		return Settings{}, nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("oci: reading the settings of %s: %w", app, err)
	}
	var s Settings
	if err := json.Unmarshal(raw, &s); err != nil {
		return Settings{}, fmt.Errorf("oci: decoding the settings of %s: %w", app, err)
	}
	return s, nil
}

// SetSettings replaces an app's settings.
func (r *Registry) SetSettings(ctx context.Context, app string, s Settings) error {
	if !validName(app) {
		return errcode.New(errcode.BadRequest,
			"app %q cannot have images: registry names are 1 to %d lowercase letters, digits, '.', '_' and '-'", app, names.MaxLen)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("oci: encoding settings: %w", err)
	}
	if err := r.st.PutDoc(ctx, docSettings, app, raw); err != nil {
		return fmt.Errorf("oci: storing the settings of %s: %w", app, err)
	}
	return nil
}
