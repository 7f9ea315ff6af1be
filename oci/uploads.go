package oci

import (
	"context"
	"fmt"
	"path"
	"time"

	storagedriver "github.com/distribution/distribution/v3/registry/storage/driver"

	"github.com/corehq/core/internal/periodic"
)

// An upload a client started and left (a push killed, a connection lost)
// keeps what it received in the store under its repository's _uploads
// until it is swept: SweepUploads removes each upload that received
// nothing for Config.UploadMaxAge, every Config.UploadSweepInterval. An
// upload is aborted when it stops receiving, however long ago it started:
// a slow chunked upload that keeps sending is not swept. With the
// defaults (45 minutes idle, a sweep every 15 minutes) an aborted upload
// is gone within an hour of its last byte.

// uploadsDir is the directory under a repository that holds its
// unfinished uploads, one directory each (distribution's layout).
const uploadsDir = "_uploads"

// SweepUploads removes the unfinished uploads whose last write is
// UploadMaxAge or more before now, and returns how many it removed. Safe
// to run while clients push, on this process or another: an upload that
// received anything since the cutoff is kept.
func (r *Registry) SweepUploads(ctx context.Context, now time.Time) (int, error) {
	cutoff := now.Add(-r.cfg.UploadMaxAge)
	var uploads []string
	err := r.driver.Walk(ctx, path.Join(storageRoot, "repositories"), func(fi storagedriver.FileInfo) error {
		if !fi.IsDir() {
			return nil
		}
		switch path.Base(fi.Path()) {
		case uploadsDir:
			list, err := r.driver.List(ctx, fi.Path())
			if err != nil && !isPathNotFound(err) {
				return err
			}
			uploads = append(uploads, list...)
			return storagedriver.ErrSkipDir
		case "_manifests", "_layers":
			return storagedriver.ErrSkipDir
		}
		return nil
	})
	if err != nil && !isPathNotFound(err) {
		return 0, fmt.Errorf("oci: listing uploads: %w", err)
	}
	removed := 0
	for _, dir := range uploads {
		last, err := r.lastWrite(ctx, dir)
		if isPathNotFound(err) {
			continue // finished or removed meanwhile
		}
		if err != nil {
			return removed, err
		}
		if last.After(cutoff) {
			continue
		}
		if err := r.driver.Delete(ctx, dir); err != nil && !isPathNotFound(err) {
			return removed, fmt.Errorf("oci: removing upload %s: %w", path.Base(dir), err)
		}
		removed++
	}
	return removed, nil
}

// lastWrite is the latest modification time of the files of an upload's
// directory (its start time, its data, its hash states).
func (r *Registry) lastWrite(ctx context.Context, dir string) (time.Time, error) {
	var last time.Time
	err := r.driver.Walk(ctx, dir, func(fi storagedriver.FileInfo) error {
		if fi.ModTime().After(last) {
			last = fi.ModTime()
		}
		return nil
	})
	if err != nil {
		return time.Time{}, err
	}
	if last.IsZero() {
		fi, err := r.driver.Stat(ctx, dir)
		if err != nil {
			return time.Time{}, err
		}
		last = fi.ModTime()
	}
	return last, nil
}

// SweepUploadsEvery sweeps aborted uploads every Config.UploadSweepInterval
// until ctx ends; failures go to onErr.
func (r *Registry) SweepUploadsEvery(ctx context.Context, onErr func(error)) {
	periodic.Run(ctx, r.cfg.UploadSweepInterval, func(ctx context.Context) error {
		_, err := r.SweepUploads(ctx, time.Now())
		return err
	}, onErr)
}
