package fn

import (
	"path"
	"strings"
	"sync/atomic"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/require"
)

// Package is a published function version ready to run: its files and a
// require registry that compiles each module once and shares the
// compiled program with every call of the version. Immutable; a new
// upload of the version makes a new Package.
type Package struct {
	App, Name, Version string
	// SHA256 is the hex digest of the package's canonical encoding: equal
	// digests mean equal packages.
	SHA256 string
	// Main is the entry module's path inside the package.
	Main string

	files map[string][]byte
	size  int
	reg   *require.Registry
	// reads counts the sources require fetched to compile: a warm call
	// fetches none (the registry keeps the compiled programs).
	reads atomic.Int64
}

// NewPackage returns a runnable package of a bundle.
func NewPackage(app, name, version, sha256 string, b *Bundle) *Package {
	p := &Package{App: app, Name: name, Version: version, SHA256: sha256, Main: b.Main, files: b.Files, size: b.size()}
	p.reg = require.NewRegistry(require.WithLoader(p.load), require.WithPathResolver(resolvePath))
	// Registry-level modules take precedence over goja_nodejs's global
	// ones: console must be the call's own (the global one prints to the
	// service's stdout), process must not exist.
	for _, name := range []string{"console", "node:console"} {
		p.reg.RegisterNativeModule(name, func(vm *goja.Runtime, module *goja.Object) {
			_ = module.Set("exports", vm.Get("console"))
		})
	}
	for _, name := range []string{"crypto", "node:crypto"} {
		p.reg.RegisterNativeModule(name, requireCrypto)
	}
	for _, name := range refusedModules {
		p.reg.RegisterNativeModule(name, refuseModule(name))
		p.reg.RegisterNativeModule("node:"+name, refuseModule(name))
	}
	return p
}

// refusedModules are Node core modules that would reach the host; they
// answer a clear error instead of "Invalid module". (goja_nodejs does not
// implement most of them, and the registry-level entry makes sure a
// future one is not picked up by accident.)
var refusedModules = []string{
	"fs", "fs/promises", "child_process", "process", "os", "net", "http", "https",
	"http2", "dgram", "dns", "tls", "cluster", "worker_threads", "vm", "v8",
	"module", "inspector", "perf_hooks", "repl", "readline", "tty",
}

func refuseModule(name string) require.ModuleLoader {
	return func(vm *goja.Runtime, _ *goja.Object) {
		panic(vm.NewGoError(&moduleError{name: name}))
	}
}

type moduleError struct{ name string }

func (e *moduleError) Error() string {
	return "module " + e.name + " is not available to functions (no file system, process or network access)"
}

// Size is the summed size of the package's files.
func (p *Package) Size() int {
	if p == nil {
		return 0
	}
	return p.size
}

// load serves require's source loader from the package's files only.
func (p *Package) load(name string) ([]byte, error) {
	if b, ok := p.files[name]; ok {
		p.reads.Add(1)
		return b, nil
	}
	return nil, require.ModuleFileDoesNotExistError
}

// unresolvable is a path no package holds (NUL is refused in names).
const unresolvable = "\x00"

// resolvePath joins a require() argument to the requiring module's
// directory, in the package's own name space: absolute paths,
// backslashes and anything that climbs out of the package resolve to
// nothing.
func resolvePath(base, p string) string {
	if strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00") || strings.HasPrefix(base, "/") {
		return unresolvable
	}
	j := path.Join(base, p)
	if j == ".." || strings.HasPrefix(j, "../") {
		return unresolvable
	}
	return j
}
