package fn

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/internal/names"
	"github.com/corehq/core/store"
)

// Store document kinds of published functions.
const (
	docFunction = "function"       // key "<app>/<name>/<version>": functionDoc
	docChunk    = "function-chunk" // key "<app>/<name>/<version>/<sha256>/<i>": part of the bundle's JSON
)

// chunkSize splits a bundle across documents, so that a package stays
// under every store's document limit (16 MiB on MongoDB).
const chunkSize = 512 << 10

// Info describes a published function version.
type Info struct {
	App       string    `json:"app"`
	Name      string    `json:"name"`
	Version   string    `json:"version"`
	Main      string    `json:"main"`
	SHA256    string    `json:"sha256"`
	Size      int       `json:"size"`
	Files     []string  `json:"files,omitempty"` // not in listings
	Format    string    `json:"format"`
	Published time.Time `json:"published"`
}

// functionDoc is a function version as stored: its Info and how many
// chunks hold its bundle.
type functionDoc struct {
	Info
	Chunks int `json:"chunks"`
}

// PutResult says what Publish did.
type PutResult int

const (
	Created PutResult = iota
	Replaced
	Unchanged
)

func (r PutResult) String() string {
	switch r {
	case Created:
		return "created"
	case Replaced:
		return "replaced"
	default:
		return "unchanged"
	}
}

// Packages keeps published function versions in the store's documents,
// so that they live wherever the service's data lives, and serves them
// to the runtime through a bounded in-memory cache (Load). Safe for
// concurrent use.
type Packages struct {
	st  store.Store
	cfg PackagesConfig

	mu sync.Mutex // serialises Publish and Delete

	cmu   sync.Mutex
	cache map[string]*cached
	lru   *list.List // of keys, most recently used first
	bytes int
}

// cached is a package (nil: known not to be published) and when the
// store last confirmed it.
type cached struct {
	pkg     *Package
	checked time.Time
	elem    *list.Element
}

// maxCacheEntries bounds the cache's entries, "not published" ones
// included.
const maxCacheEntries = 4096

var _ Source = (*Packages)(nil)

// NewPackages returns the function packages kept in st.
func NewPackages(st store.Store, cfg PackagesConfig) *Packages {
	return &Packages{st: st, cfg: cfg, cache: map[string]*cached{}, lru: list.New()}
}

func funcKey(app, name, version string) string { return app + "/" + name + "/" + version }

// Publish stores a function version from an uploaded .js source, .zip or
// .tar.gz (see ParseUpload). Publishing the same content again is
// Unchanged; other content replaces the version. A bad package is a
// BAD_REQUEST, an oversized one TOO_LARGE, each saying why.
func (p *Packages) Publish(ctx context.Context, app, name, version string, upload []byte) (Info, PutResult, error) {
	if err := checkNames(app, name, version); err != nil {
		return Info{}, 0, err
	}
	b, format, err := ParseUpload(upload, p.cfg)
	if err != nil {
		code, reason := errcode.BadRequest, err.Error()
		if errors.Is(err, ErrTooLarge) {
			code = errcode.TooLarge
		}
		if pe := (*PackageError)(nil); errors.As(err, &pe) {
			reason = pe.Reason
		}
		return Info{}, 0, errcode.Wrap(code, err, "function %s version %s: %s", name, version, reason)
	}
	raw, err := json.Marshal(b) // map keys sorted: the same files encode the same way
	if err != nil {
		return Info{}, 0, fmt.Errorf("fn: encoding %s: %w", funcKey(app, name, version), err)
	}
	sum := sha256.Sum256(raw)
	info := Info{
		App: app, Name: name, Version: version, Main: b.Main, SHA256: hex.EncodeToString(sum[:]),
		Size: b.size(), Files: slices.Sorted(maps.Keys(b.Files)), Format: format, Published: time.Now().UTC(),
	}
	key := funcKey(app, name, version)

	p.mu.Lock()
	defer p.mu.Unlock()
	old, err := p.doc(ctx, key)
	switch {
	case err == nil && old.SHA256 == info.SHA256:
		p.remember(key, NewPackage(app, name, version, info.SHA256, b))
		return old.Info, Unchanged, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return Info{}, 0, err
	}
	// Chunks first, under keys that name the content: a reader that sees
	// the new document finds its chunks; one holding the old document
	// still finds the old ones until they are removed below.
	chunks := 0
	for off := 0; off < len(raw); off += chunkSize {
		part := raw[off:min(off+chunkSize, len(raw))]
		if err := p.st.PutDoc(ctx, docChunk, chunkKey(key, info.SHA256, chunks), part); err != nil {
			return Info{}, 0, fmt.Errorf("fn: storing %s: %w", key, err)
		}
		chunks++
	}
	doc, err := json.Marshal(functionDoc{Info: info, Chunks: chunks})
	if err != nil {
		return Info{}, 0, fmt.Errorf("fn: encoding %s: %w", key, err)
	}
	if err := p.st.PutDoc(ctx, docFunction, key, doc); err != nil {
		return Info{}, 0, fmt.Errorf("fn: storing %s: %w", key, err)
	}
	p.remember(key, NewPackage(app, name, version, info.SHA256, b))
	res := Created
	if old != nil {
		res = Replaced
		if err := p.dropChunks(ctx, key, old); err != nil {
			return info, res, err
		}
	}
	return info, res, nil
}

func chunkKey(key, sha string, i int) string { return fmt.Sprintf("%s/%s/%d", key, sha, i) }

// doc reads a function version's document; store.ErrNotFound when
// absent.
func (p *Packages) doc(ctx context.Context, key string) (*functionDoc, error) {
	raw, err := p.st.GetDoc(ctx, docFunction, key)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("fn: reading %s: %w", key, err)
	}
	var d functionDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("fn: decoding %s: %w", key, err)
	}
	return &d, nil
}

func (p *Packages) dropChunks(ctx context.Context, key string, d *functionDoc) error {
	for i := range d.Chunks {
		if err := p.st.DeleteDoc(ctx, docChunk, chunkKey(key, d.SHA256, i)); err != nil {
			return fmt.Errorf("fn: removing the old content of %s: %w", key, err)
		}
	}
	return nil
}

// Info describes a published version; NOT_FOUND (*NotPublishedError)
// when it does not exist.
func (p *Packages) Info(ctx context.Context, app, name, version string) (Info, error) {
	d, err := p.doc(ctx, funcKey(app, name, version))
	if errors.Is(err, store.ErrNotFound) {
		return Info{}, notPublished(app, name, version)
	}
	if err != nil {
		return Info{}, err
	}
	return d.Info, nil
}

// List returns every published version of an app's functions, sorted by
// name and version.
func (p *Packages) List(ctx context.Context, app string) ([]Info, error) {
	docs, err := p.st.ListDocs(ctx, docFunction)
	if err != nil {
		return nil, fmt.Errorf("fn: listing functions: %w", err)
	}
	out := []Info{}
	for key, raw := range docs {
		if !strings.HasPrefix(key, app+"/") {
			continue
		}
		var d functionDoc
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("fn: decoding %s: %w", key, err)
		}
		out = append(out, d.Info)
	}
	slices.SortFunc(out, func(a, b Info) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Version, b.Version)
	})
	return out, nil
}

// Delete removes a published version and returns what it was; NOT_FOUND
// when it does not exist. Bindings naming it answer "not published" from
// then on.
func (p *Packages) Delete(ctx context.Context, app, name, version string) (Info, error) {
	key := funcKey(app, name, version)
	p.mu.Lock()
	defer p.mu.Unlock()
	d, err := p.doc(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return Info{}, notPublished(app, name, version)
	}
	if err != nil {
		return Info{}, err
	}
	if err := p.st.DeleteDoc(ctx, docFunction, key); err != nil {
		return Info{}, fmt.Errorf("fn: deleting %s: %w", key, err)
	}
	p.remember(key, nil)
	return d.Info, p.dropChunks(ctx, key, d)
}

// Load returns a published version ready to run (Source). A cached
// package is served for PackagesConfig.Revalidate before the store is
// asked whether it changed; a version published or deleted through this
// Packages is seen at once, one changed by another process within
// Revalidate.
func (p *Packages) Load(ctx context.Context, app, name, version string) (*Package, error) {
	if checkNames(app, name, version) != nil {
		return nil, notPublished(app, name, version)
	}
	key := funcKey(app, name, version)
	p.cmu.Lock()
	c := p.cache[key]
	if c != nil {
		p.lru.MoveToFront(c.elem)
		if time.Since(c.checked) < p.cfg.Revalidate {
			pkg := c.pkg
			p.cmu.Unlock()
			if pkg == nil {
				return nil, notPublished(app, name, version)
			}
			return pkg, nil
		}
	}
	p.cmu.Unlock()

	d, err := p.doc(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		p.remember(key, nil)
		return nil, notPublished(app, name, version)
	}
	if err != nil {
		return nil, err
	}
	if c != nil && c.pkg != nil && c.pkg.SHA256 == d.SHA256 {
		p.remember(key, c.pkg)
		return c.pkg, nil
	}
	b, err := p.readBundle(ctx, key, d)
	if err != nil {
		return nil, err
	}
	pkg := NewPackage(app, name, version, d.SHA256, b)
	p.remember(key, pkg)
	return pkg, nil
}

// readBundle reads and checks a version's chunks.
func (p *Packages) readBundle(ctx context.Context, key string, d *functionDoc) (*Bundle, error) {
	var raw bytes.Buffer
	for i := range d.Chunks {
		part, err := p.st.GetDoc(ctx, docChunk, chunkKey(key, d.SHA256, i))
		if err != nil {
			return nil, fmt.Errorf("fn: reading %s (chunk %d): %w", key, i, err)
		}
		raw.Write(part)
	}
	sum := sha256.Sum256(raw.Bytes())
	if hex.EncodeToString(sum[:]) != d.SHA256 {
		return nil, fmt.Errorf("fn: %s: stored content does not match its digest", key)
	}
	var b Bundle
	if err := json.Unmarshal(raw.Bytes(), &b); err != nil {
		return nil, fmt.Errorf("fn: decoding %s: %w", key, err)
	}
	return &b, nil
}

// remember caches pkg (nil: not published) as just confirmed, evicting
// the least recently used packages beyond the cache's bounds.
func (p *Packages) remember(key string, pkg *Package) {
	p.cmu.Lock()
	defer p.cmu.Unlock()
	if c := p.cache[key]; c != nil {
		p.bytes -= c.pkg.Size()
		p.lru.Remove(c.elem)
	}
	c := &cached{pkg: pkg, checked: time.Now(), elem: p.lru.PushFront(key)}
	p.cache[key] = c
	p.bytes += pkg.Size()
	for p.lru.Len() > 1 && (p.bytes > p.cfg.CacheBytes || p.lru.Len() > maxCacheEntries) {
		last := p.lru.Back()
		k := last.Value.(string)
		p.bytes -= p.cache[k].pkg.Size()
		delete(p.cache, k)
		p.lru.Remove(last)
	}
}

func notPublished(app, name, version string) error {
	return &NotPublishedError{App: app, Name: name, Version: version}
}

// checkNames checks app, function and version names (names.Valid: they
// appear in URLs, store keys and image references).
func checkNames(app, name, version string) error {
	for _, f := range [...]struct{ what, v string }{{"app", app}, {"function name", name}, {"version", version}} {
		if !names.Valid(f.v) {
			return errcode.New(errcode.BadRequest, "%s %q: use %s", f.what, f.v, names.Rule)
		}
	}
	return nil
}
