package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/corehq/core/fn"
)

// appFile is DIR/app.yaml (DESIGN.md, "Admin API and CLI").
type appFile struct {
	App     string `yaml:"app"`
	Realm   string `yaml:"realm"`
	Release string `yaml:"release"`
	// Schema is the SDL file, relative to DIR.
	Schema string `yaml:"schema"`
	// Functions are the function versions to publish: name -> version ->
	// a .js file or a package directory, relative to DIR.
	Functions map[string]map[string]string `yaml:"functions"`
	Instances []appInstance                `yaml:"instances"`

	// packages are the Functions read from DIR, sorted by name and
	// version.
	packages []functionPackage
}

// functionPackage is a function version ready to upload: a .js source,
// or a package directory as a .tar.gz.
type functionPackage struct {
	name, version, path string
	body                []byte
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
	if a.packages, err = loadFunctions(dir, a.Functions); err != nil {
		return nil, "", err
	}
	return &a, string(sdl), nil
}

// loadFunctions reads each function version of app.yaml: a file is sent
// as it is (a .js source, or a .zip/.tar.gz made beforehand); a
// directory is packed as a .tar.gz of its regular files (".git" left
// out, symbolic links refused). The server checks the package.
func loadFunctions(dir fs.FS, funcs map[string]map[string]string) ([]functionPackage, error) {
	var out []functionPackage
	for _, name := range slices.Sorted(maps.Keys(funcs)) {
		for _, version := range slices.Sorted(maps.Keys(funcs[name])) {
			p := funcs[name][version]
			where := fmt.Sprintf("functions: %s %s", name, version)
			if !fs.ValidPath(p) || p == "." {
				return nil, fmt.Errorf("app.yaml: %s: %q must be a path inside the app directory (no leading /, no ..)", where, p)
			}
			fi, err := fs.Stat(dir, p)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			var body []byte
			if fi.IsDir() {
				body, err = packDir(dir, p)
			} else {
				body, err = fs.ReadFile(dir, p)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			out = append(out, functionPackage{name: name, version: version, path: p, body: body})
		}
	}
	return out, nil
}

// packDir makes a .tar.gz of the regular files under root, with names
// relative to it, in a stable order and without times or owners: the same
// files pack the same way.
func packDir(dir fs.FS, root string) ([]byte, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(dir, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir() && d.Name() == ".git":
			return fs.SkipDir
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: packages hold regular files only", p)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file", p)
		}
		data, err := fs.ReadFile(dir, p)
		if err != nil {
			return err
		}
		files[strings.TrimPrefix(p, root+"/")] = data
		return nil
	})
	if err != nil {
		return nil, err
	}
	return fn.Pack(files)
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
