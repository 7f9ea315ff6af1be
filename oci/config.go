package oci

import (
	"errors"
	"fmt"
	"time"

	"github.com/corehq/core/fn"
)

// User is the registry login's fixed user name: `docker login -u core`.
const User = "core"

// Config configures the registry (see New).
type Config struct {
	// MaxRequestBytes bounds the body of one upload request: a layer sent
	// whole, or one chunk of a chunked upload. (The server's --body-limit
	// does not apply to /v2/.)
	MaxRequestBytes int64
	// TransferTimeout is how long one upload or download of a blob may
	// take; it replaces the server's read and write time-outs for those
	// requests, which are made for small API calls.
	TransferTimeout time.Duration
	// MaxImageBytes bounds what is decompressed when a pushed image is
	// read for its function: the layers' tar streams, summed.
	MaxImageBytes int64
	// Packages bounds the function package read from an image (files,
	// unpacked bytes), as for packages published through the admin API.
	Packages fn.PackagesConfig
	// GCGrace is how old an unreferenced blob or an untagged manifest
	// must be before garbage collection removes it: younger ones may
	// belong to a push still in progress, on this process or another.
	GCGrace time.Duration
	// UploadMaxAge is how long an unfinished upload is kept after it last
	// received data before it is swept as aborted (uploads.go).
	UploadMaxAge time.Duration
	// UploadSweepInterval is how often SweepUploadsEvery looks for aborted
	// uploads: one is removed at most UploadMaxAge + UploadSweepInterval
	// after its last write.
	UploadSweepInterval time.Duration
}

// DefaultConfig returns 1 GiB per upload request, 30 minutes per
// transfer, 4 GiB decompressed per inspected image, the package bounds of
// fn.DefaultPackagesConfig, and a garbage collection that spares the last
// hour's blobs, and a sweep every 15 minutes of the uploads that received
// nothing for 45 minutes (so an aborted upload is gone within the hour;
// a monolithic upload's one request may last TransferTimeout, 30 minutes).
func DefaultConfig() Config {
	return Config{
		MaxRequestBytes:     1 << 30,
		TransferTimeout:     30 * time.Minute,
		MaxImageBytes:       4 << 30,
		Packages:            fn.DefaultPackagesConfig(),
		GCGrace:             time.Hour,
		UploadMaxAge:        45 * time.Minute,
		UploadSweepInterval: 15 * time.Minute,
	}
}

func (c Config) validate() error {
	var errs []error
	if c.MaxRequestBytes <= 0 {
		errs = append(errs, fmt.Errorf("MaxRequestBytes must be positive, got %d", c.MaxRequestBytes))
	}
	if c.TransferTimeout <= 0 {
		errs = append(errs, fmt.Errorf("TransferTimeout must be positive, got %s", c.TransferTimeout))
	}
	if c.MaxImageBytes <= 0 {
		errs = append(errs, fmt.Errorf("MaxImageBytes must be positive, got %d", c.MaxImageBytes))
	}
	if c.Packages.MaxFiles <= 0 || c.Packages.MaxUnpackedBytes <= 0 || c.Packages.MaxUploadBytes <= 0 {
		errs = append(errs, errors.New("Packages needs positive MaxFiles, MaxUnpackedBytes and MaxUploadBytes"))
	}
	if c.GCGrace < 0 || c.UploadMaxAge < 0 {
		errs = append(errs, errors.New("GCGrace and UploadMaxAge must not be negative"))
	}
	if c.UploadSweepInterval <= 0 {
		errs = append(errs, fmt.Errorf("UploadSweepInterval must be positive, got %s", c.UploadSweepInterval))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("oci: invalid config: %w", err)
	}
	return nil
}
