package oci

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/distribution/distribution/v3"
	"github.com/distribution/distribution/v3/registry/api/errcode"
	"github.com/distribution/distribution/v3/registry/storage"
	storagedriver "github.com/distribution/distribution/v3/registry/storage/driver"
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
// OCI Distribution API at /v2/ (served by the api_*.go handlers over
// distribution's storage), over the service's store, behind the service's
// authentication and naming rules (doc.go). Safe for concurrent use.
type Registry struct {
	cfg       Config
	st        store.Store
	pk        Publisher
	tokens    *Tokens
	adminHash [32]byte

	// sealer keeps uploadSecret sealed in the store; uploadSecret signs
	// the states of uploads in progress (api_uploads.go).
	sealer       Sealer
	uploadSecret string

	driver storagedriver.StorageDriver
	// ns is distribution's storage of blobs, manifests and tags over
	// driver: what the API serves, images are read from and garbage is
	// collected in.
	ns distribution.Namespace

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
	ns, err := newNamespace(d)
	if err != nil {
		return nil, err
	}
	return &Registry{cfg: cfg, st: st, pk: pk, sealer: sealer, uploadSecret: secret, tokens: NewTokens(st), adminHash: adminHash, driver: d, ns: ns}, nil
}

// newNamespace returns distribution's storage on driver d, configured as
// the reference registry was when cored served its HTTP layer: deletes
// allowed (for tags, manifests and garbage collection); a
// non-distributable layer may name http and https URLs (OCI image-spec:
// it is fetched from there, not pushed), where distribution by default
// refuses such manifests; an image index only with all its images. No
// redirects (clients fetch blobs from cored) and no descriptor cache (the
// store is shared by every process).
func newNamespace(d storagedriver.StorageDriver) (distribution.Namespace, error) {
	ns, err := storage.NewRegistry(context.Background(), d,
		storage.EnableDelete,
		storage.ManifestURLsAllowRegexp(regexp.MustCompile(`^https?://`)),
		storage.EnableValidateImageIndexImagesExist)
	if err != nil {
		return nil, fmt.Errorf("oci: %w", err)
	}
	return ns, nil
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

// Close releases the registry. It holds nothing that runs on its own
// (the sweeps and collections run on their callers' contexts), so it
// only exists for symmetry with New.
func (r *Registry) Close() error { return nil }

// Tokens returns the registry's publishing tokens.
func (r *Registry) Tokens() *Tokens { return r.tokens }

// Register mounts the registry on e at /v2/ (where container clients
// look for it). Its requests must not pass the server's body limit:
// Config.MaxRequestBytes bounds them instead.
func (r *Registry) Register(e *echo.Echo) {
	e.Any("/v2", r.Handle)
	e.Any("/v2/*", r.Handle)
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
