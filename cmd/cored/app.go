package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"go.yaml.in/yaml/v3"
)

// appFile is DIR/app.yaml (DESIGN.md, "Admin API and CLI").
type appFile struct {
	App     string `yaml:"app"`
	Realm   string `yaml:"realm"`
	Release string `yaml:"release"`
	// Schema is the SDL file, relative to DIR.
	Schema string `yaml:"schema"`
	// Functions (name -> version -> path) are read but not yet deployed.
	Functions map[string]map[string]string `yaml:"functions"`
	Instances []appInstance                `yaml:"instances"`
}

type appInstance struct {
	Domain                string            `yaml:"domain"`
	AnonymousRequests     bool              `yaml:"anonymousRequests"`
	AnonymousRegistration bool              `yaml:"anonymousRegistration"`
	Env                   map[string]string `yaml:"env"`
}

// loadApp reads app.yaml from an app directory and the schema it names.
// Unknown keys are errors (a misspelt setting must not be dropped
// silently). Paths are relative to the directory and may not leave it.
func loadApp(dir fs.FS) (*appFile, string, error) {
	raw, err := fs.ReadFile(dir, "app.yaml")
	if err != nil {
		return nil, "", fmt.Errorf("reading app.yaml: %w", err)
	}
	var a appFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, "", errors.New("app.yaml is empty")
		}
		return nil, "", fmt.Errorf("app.yaml: %w", err)
	}
	if err := a.check(); err != nil {
		return nil, "", fmt.Errorf("app.yaml: %w", err)
	}
	if !fs.ValidPath(a.Schema) {
		return nil, "", fmt.Errorf("app.yaml: schema %q must be a path inside the app directory (no leading /, no ..)", a.Schema)
	}
	sdl, err := fs.ReadFile(dir, a.Schema)
	if err != nil {
		return nil, "", fmt.Errorf("reading the schema: %w", err)
	}
	return &a, string(sdl), nil
}

func (a *appFile) check() error {
	for _, f := range [...]struct{ name, v string }{{"app", a.App}, {"release", a.Release}, {"schema", a.Schema}} {
		if f.v == "" {
			return fmt.Errorf("%s is required", f.name)
		}
	}
	seen := map[string]bool{}
	for i, in := range a.Instances {
		if in.Domain == "" {
			return fmt.Errorf("instances[%d]: domain is required", i)
		}
		if seen[in.Domain] {
			return fmt.Errorf("instances[%d]: domain %s is listed twice", i, in.Domain)
		}
		seen[in.Domain] = true
	}
	return nil
}
