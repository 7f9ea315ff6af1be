package oci

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/distribution/distribution/v3"
	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/api/errcode"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/distribution/distribution/v3/registry/storage"
	storagedriver "github.com/distribution/distribution/v3/registry/storage/driver"
	"github.com/distribution/distribution/v3/registry/storage/driver/factory"
	"github.com/distribution/reference"
	"github.com/labstack/echo/v4"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/keyring"
	"github.com/corehq/core/oci/docfs"
	"github.com/corehq/core/store"
)

// Publisher publishes the function packages read from JavaScript images
// and removes the ones an image no longer provides (*fn.Packages).
type Publisher interface {
	Publish(ctx context.Context, app, name, version string, upload []byte) (fn.Info, fn.PutResult, error)
	Info(ctx context.Context, app, name, version string) (fn.Info, error)
	Delete(ctx context.Context, app, name, version string) (fn.Info, error)
}

var (
	_ Publisher     = (*fn.Packages)(nil)
	_ fn.Containers = (*Registry)(nil)
)

// Registry is the service's container registry of function images: the
// OCI Distribution API at /v2/, served by distribution's registry over
// the service's store, behind the service's authentication and naming
// rules (doc.go). Safe for concurrent use.
type Registry struct {
	cfg       Config
	st        store.Store
	pk        Publisher
	tokens    *Tokens
	adminHash [32]byte

	// sealer keeps uploadSecret sealed in the store; uploadSecret signs
	// the states of uploads in progress (distribution's HTTP secret).
	sealer       Sealer
	uploadSecret string

	driver storagedriver.StorageDriver
	app    *handlers.App          // the OCI Distribution API
	ns     distribution.Namespace // the same storage, for reading images and collecting garbage

	// pushMu serialises this process's tag pushes and manifest deletions,
	// so that the tag check, the push and the publication of the function
	// happen as one.
	pushMu sync.Mutex
}

// Where the secret that signs upload states is kept: every process on
// the store must share it, or an upload started through one process
// could not be continued through another.
const (
	docService      = "registry"
	keyUploadSecret = "upload-secret"
)

// driverName is the name under which distribution's factory finds the
// docfs driver of a registry (passed in the configuration).
const driverName = "core-docfs"

// registerDriver registers the docfs factory with distribution, whose
// registry of drivers is global and refuses a second registration. The
// factory holds nothing: each registry hands its own driver through its
// configuration.
var registerDriver sync.Once

type driverFactory struct{}

func (driverFactory) Create(_ context.Context, params map[string]any) (storagedriver.StorageDriver, error) {
	d, ok := params["driver"].(storagedriver.StorageDriver)
	if !ok {
		return nil, errors.New("oci: the configuration holds no docfs driver")
	}
	return d, nil
}

// New returns the registry over st, publishing the functions of
// JavaScript images through pk, admitting the admin token whose SHA-256
// is adminHash and the publishing tokens of Tokens, keeping its upload
// secret sealed by sealer. Close it when done.
func New(ctx context.Context, cfg Config, st store.Store, pk Publisher, adminHash [32]byte, sealer Sealer) (*Registry, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if st == nil || pk == nil || sealer == nil {
		return nil, errors.New("oci: New needs a store, a publisher and a sealer")
	}
	secret, err := uploadSecret(ctx, st, sealer)
	if err != nil {
		return nil, err
	}
	d := docfs.New(st)
	app, err := newApp(d, secret)
	if err != nil {
		return nil, err
	}
	ns, err := storage.NewRegistry(context.Background(), d, storage.EnableDelete)
	if err != nil {
		_ = app.Shutdown()
		return nil, fmt.Errorf("oci: %w", err)
	}
	return &Registry{cfg: cfg, st: st, pk: pk, sealer: sealer, uploadSecret: secret, tokens: NewTokens(st), adminHash: adminHash, driver: d, app: app, ns: ns}, nil
}

// newApp builds distribution's HTTP application on driver d: deletes
// allowed (for tags, manifests and garbage collection), no redirects,
// relative Location URLs (so proxies in front need no configuration), no
// background upload purging (Collect does it), image indexes only with
// all their images. NewApp panics on a bad configuration; that becomes an
// error.
func newApp(d storagedriver.StorageDriver, secret string) (app *handlers.App, err error) {
	registerDriver.Do(func() { factory.Register(driverName, driverFactory{}) })
	conf := &configuration.Configuration{}
	conf.Storage = configuration.Storage{
		driverName:    configuration.Parameters{"driver": d},
		"delete":      configuration.Parameters{"enabled": true},
		"redirect":    configuration.Parameters{"disable": true},
		"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
	}
	// A layer that is not distributable names where it is fetched from
	// (urls) and is not pushed: accept such manifests (OCI image-spec)
	// rather than failing them.
	conf.Validation.Manifests.URLs.Allow = []string{`^https?://`}
	conf.HTTP.Secret = secret
	conf.HTTP.RelativeURLs = true
	// The defaults distribution's configuration parser would set (the
	// parser also reads REGISTRY_* environment variables, which should
	// not reconfigure cored, so the configuration is built here).
	conf.Catalog.MaxEntries = 1000
	conf.Tags.MaxTags = 1000
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("oci: starting the registry: %v", x)
		}
	}()
	return handlers.NewApp(context.Background(), conf), nil
}

// Sealer seals the upload secret in the store (keyring.Keeper is one):
// its keys live outside the store, so a copy of the store does not hold
// the secret.
type Sealer interface {
	Seal(plain []byte, aad string) string
	Open(sealed, aad string) (plain []byte, current bool, err error)
}

// uploadAAD binds the sealed upload secret to its place.
const uploadAAD = "core registry upload secret"

// uploadSecret reads the shared secret, making it on the first start.
// Processes making it at once agree on the first one stored
// (store.CreateDoc). It is kept sealed: one sealed with an older key, or
// stored in clear by a version before the key ring, is stored again
// sealed with the active key (the same secret, so uploads in progress on
// other processes go on); one that no longer opens (its key was retired
// first) is replaced by a new one, which ends the uploads in progress.
func uploadSecret(ctx context.Context, st store.Store, sealer Sealer) (string, error) {
	raw, err := st.GetDoc(ctx, docService, keyUploadSecret)
	if errors.Is(err, store.ErrNotFound) {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("oci: making the upload secret: %w", err)
		}
		fresh := sealer.Seal([]byte(hex.EncodeToString(b[:])), uploadAAD)
		if raw, err = st.CreateDoc(ctx, docService, keyUploadSecret, []byte(fresh)); err != nil {
			return "", fmt.Errorf("oci: storing the upload secret: %w", err)
		}
	} else if err != nil {
		return "", fmt.Errorf("oci: reading the upload secret: %w", err)
	}
	if !keyring.IsSealed(string(raw)) { // in clear, from an older version
		return string(raw), putUploadSecret(ctx, st, sealer, raw)
	}
	plain, current, err := sealer.Open(string(raw), uploadAAD)
	if err != nil {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("oci: making the upload secret: %w", err)
		}
		plain, current = []byte(hex.EncodeToString(b[:])), false
	}
	if !current {
		return string(plain), putUploadSecret(ctx, st, sealer, plain)
	}
	return string(plain), nil
}

func putUploadSecret(ctx context.Context, st store.Store, sealer Sealer, plain []byte) error {
	if err := st.PutDoc(ctx, docService, keyUploadSecret, []byte(sealer.Seal(plain, uploadAAD))); err != nil {
		return fmt.Errorf("oci: storing the upload secret: %w", err)
	}
	return nil
}

// Reseal stores the registry's upload secret again, sealed with the
// active key, unless the store holds it sealed with that key already: the
// running registry keeps the secret it started with (every process on the
// store agreed on it), and a key ring change must not leave it sealed
// with a key about to be retired.
func (r *Registry) Reseal(ctx context.Context) error {
	raw, err := r.st.GetDoc(ctx, docService, keyUploadSecret)
	if err == nil && keyring.IsSealed(string(raw)) {
		if _, current, err := r.sealer.Open(string(raw), uploadAAD); err == nil && current {
			return nil
		}
	}
	return putUploadSecret(ctx, r.st, r.sealer, []byte(r.uploadSecret))
}

// Close stops the registry.
func (r *Registry) Close() error { return r.app.Shutdown() }

// Tokens returns the registry's publishing tokens.
func (r *Registry) Tokens() *Tokens { return r.tokens }

// Register mounts the registry on e at /v2/ (where container clients
// look for it). Its requests must not pass the server's body limit:
// Config.MaxRequestBytes bounds them instead.
func (r *Registry) Register(e *echo.Echo) {
	e.Any("/v2", r.Handle)
	e.Any("/v2/*", r.Handle)
}

// Handle serves one request of the OCI Distribution API as an echo
// handler. Failures are answered in the OCI error format (the one
// container clients read); the cause of a 5xx is returned for the
// server's log line, after the answer is written.
func (r *Registry) Handle(c echo.Context) error {
	return r.serve(c.Response(), c.Request())
}

// serve sandboxes the answer (sandbox.go), checks who calls and what
// for, then hands the request to distribution; pushes and deletions of
// tags go through push.go.
func (r *Registry) serve(w http.ResponseWriter, req *http.Request) error {
	if err := sandbox(w, req); err != nil {
		return answer(w, err)
	}
	who, err := r.authenticate(req)
	if err != nil {
		return answer(w, err)
	}
	rt, err := parseRoute(req.URL.Path)
	if err != nil {
		return answer(w, err)
	}
	if err := who.mayUse(rt); err != nil {
		return answer(w, err)
	}
	if err := r.checkDeclaredSizes(req, rt); err != nil {
		return answer(w, err)
	}
	switch {
	case rt.kind == kindBlobs:
		if req.ContentLength > r.cfg.MaxRequestBytes {
			return answer(w, errcode.ErrorCodeSizeInvalid.WithMessage(
				fmt.Sprintf("a request may carry at most %d bytes: upload larger blobs in chunks", r.cfg.MaxRequestBytes)))
		}
		req.Body = http.MaxBytesReader(w, req.Body, r.cfg.MaxRequestBytes)
		who.limitMount(req)
		declineForeignMount(req)
		// Blobs may take longer than the API calls the server's time-outs
		// are made for (a layer on a slow link).
		deadline := time.Now().Add(r.cfg.TransferTimeout)
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(deadline) // not supported by every writer (tests); the server's time-out then holds
		_ = rc.SetWriteDeadline(deadline)
		if d := requestedDigest(req, rt); d != "" {
			w = &blobWriter{ResponseWriter: w, digest: d}
		}
	case rt.kind == kindManifests && req.Method == http.MethodPut && !isDigest(rt.ref):
		return r.pushTag(w, req, rt)
	case rt.kind == kindManifests && req.Method == http.MethodPut:
		return r.pushDigest(w, req, rt)
	case rt.kind == kindReferrers:
		return r.referrers(w, req, rt)
	case rt.kind == kindManifests && req.Method == http.MethodDelete:
		return r.deleteManifest(w, req, rt)
	}
	r.app.ServeHTTP(w, req)
	return nil
}

// repository returns the stored repository {app}/{name}.
func (r *Registry) repository(ctx context.Context, app, name string) (distribution.Repository, error) {
	named, err := reference.WithName(app + "/" + name)
	if err != nil {
		return nil, errcode.ErrorCodeNameInvalid.WithMessage(err.Error())
	}
	repo, err := r.ns.Repository(ctx, named)
	if err != nil {
		return nil, fmt.Errorf("oci: opening %s: %w", named, err)
	}
	return repo, nil
}

// answer writes err in the OCI error format: its code's status for an
// errcode.Error, else 500 UNKNOWN with a generic message. It returns err
// when the status is a 5xx (for the log line), else nil.
func answer(w http.ResponseWriter, err error) error {
	// distribution sets this on its own answers; clients look for it on
	// the 401 of /v2/ too.
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	var ce errcode.Error
	if !errors.As(err, &ce) {
		_ = errcode.ServeJSON(w, errcode.ErrorCodeUnknown.WithMessage("internal error"))
		return err
	}
	if ce.Code == errcode.ErrorCodeUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="core"`)
	}
	_ = errcode.ServeJSON(w, ce)
	if ce.Code.Descriptor().HTTPStatusCode >= http.StatusInternalServerError {
		return err
	}
	return nil
}
