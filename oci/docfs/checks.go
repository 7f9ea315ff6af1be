package docfs

import (
	"context"
	"io"
	"net/http"

	storagedriver "github.com/distribution/distribution/v3/registry/storage/driver"
)

// Driver is the storage driver. Safe for concurrent use; every method
// takes the caller's context to the store.
//
// Its methods make the checks every distribution driver makes before the
// file system is reached (those of distribution's driver/base, whose
// wrapper is not used: it traces every call with OpenTelemetry, which
// would link OpenTelemetry's exporters and gRPC into cored for nothing):
// a path is absolute and made of [A-Za-z0-9._-] components
// (storagedriver.PathRegexp; "/" only where a directory is meant), an
// offset is not negative, and errors are typed: the driver's own
// (PathNotFoundError, InvalidOffsetError, …) carry its name, any other is
// a storagedriver.Error naming it.
type Driver struct {
	d *driver
}

var _ storagedriver.StorageDriver = (*Driver)(nil)

// Name is the driver's name (Name).
func (*Driver) Name() string { return Name }

// checkPath returns InvalidPathError for a path the registry may not use;
// dir allows "/".
func checkPath(p string, dir bool) error {
	if storagedriver.PathRegexp.MatchString(p) || (dir && p == "/") {
		return nil
	}
	return storagedriver.InvalidPathError{Path: p, DriverName: Name}
}

// typed names the driver in err, as distribution's drivers do.
func typed(err error) error {
	switch e := err.(type) {
	case nil:
		return nil
	case storagedriver.PathNotFoundError:
		e.DriverName = Name
		return e
	case storagedriver.InvalidPathError:
		e.DriverName = Name
		return e
	case storagedriver.InvalidOffsetError:
		e.DriverName = Name
		return e
	case storagedriver.ErrUnsupportedMethod:
		e.DriverName = Name
		return e
	default:
		return storagedriver.Error{DriverName: Name, Detail: err}
	}
}

// GetContent returns a file's content.
func (d *Driver) GetContent(ctx context.Context, p string) ([]byte, error) {
	if err := checkPath(p, false); err != nil {
		return nil, err
	}
	b, err := d.d.GetContent(ctx, p)
	return b, typed(err)
}

// PutContent replaces a file's content.
func (d *Driver) PutContent(ctx context.Context, p string, content []byte) error {
	if err := checkPath(p, false); err != nil {
		return err
	}
	return typed(d.d.PutContent(ctx, p, content))
}

// Reader streams a file's content from offset.
func (d *Driver) Reader(ctx context.Context, p string, offset int64) (io.ReadCloser, error) {
	if offset < 0 {
		return nil, storagedriver.InvalidOffsetError{Path: p, Offset: offset, DriverName: Name}
	}
	if err := checkPath(p, false); err != nil {
		return nil, err
	}
	rc, err := d.d.Reader(ctx, p, offset)
	return rc, typed(err)
}

// Writer returns a writer of a file's content, continued when continued
// is set.
func (d *Driver) Writer(ctx context.Context, p string, continued bool) (storagedriver.FileWriter, error) {
	if err := checkPath(p, false); err != nil {
		return nil, err
	}
	w, err := d.d.Writer(ctx, p, continued)
	return w, typed(err)
}

// Stat describes a file or directory.
func (d *Driver) Stat(ctx context.Context, p string) (storagedriver.FileInfo, error) {
	if err := checkPath(p, true); err != nil {
		return nil, err
	}
	fi, err := d.d.Stat(ctx, p)
	return fi, typed(err)
}

// List returns the paths of a directory's entries.
func (d *Driver) List(ctx context.Context, p string) ([]string, error) {
	if err := checkPath(p, true); err != nil {
		return nil, err
	}
	list, err := d.d.List(ctx, p)
	return list, typed(err)
}

// Move renames a file.
func (d *Driver) Move(ctx context.Context, src, dest string) error {
	if err := checkPath(src, false); err != nil {
		return err
	}
	if err := checkPath(dest, false); err != nil {
		return err
	}
	return typed(d.d.Move(ctx, src, dest))
}

// Delete removes a file, or a directory with everything under it.
func (d *Driver) Delete(ctx context.Context, p string) error {
	if err := checkPath(p, false); err != nil {
		return err
	}
	return typed(d.d.Delete(ctx, p))
}

// RedirectURL answers no URL: clients fetch blobs from the registry.
func (d *Driver) RedirectURL(r *http.Request, p string) (string, error) {
	if err := checkPath(p, false); err != nil {
		return "", err
	}
	return d.d.RedirectURL(r, p)
}

// Walk visits every file and directory under p.
func (d *Driver) Walk(ctx context.Context, p string, f storagedriver.WalkFn, options ...func(*storagedriver.WalkOptions)) error {
	if err := checkPath(p, true); err != nil {
		return err
	}
	return typed(d.d.Walk(ctx, p, f, options...))
}
