package oci

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/distribution/distribution/v3"
	"github.com/distribution/distribution/v3/registry/storage"
	storagedriver "github.com/distribution/distribution/v3/registry/storage/driver"
	"github.com/distribution/reference"
	"github.com/opencontainers/go-digest"

	"github.com/corehq/core/internal/periodic"
)

// GCOptions tune one garbage collection.
type GCOptions struct {
	// Grace spares blobs and untagged manifests younger than it: they may
	// belong to a push in progress (Config.GCGrace by default).
	Grace time.Duration
	// DryRun reports what would be removed without removing it.
	DryRun bool
}

// GCReport says what a garbage collection removed (or would remove).
type GCReport struct {
	ManifestsDeleted int   `json:"manifestsDeleted"`
	BlobsDeleted     int   `json:"blobsDeleted"`
	BytesFreed       int64 `json:"bytesFreed"`
	BlobsKept        int   `json:"blobsKept"`
	UploadsPurged    int   `json:"uploadsPurged"`
	DryRun           bool  `json:"dryRun"`
}

// DefaultGCOptions returns the configured grace, not a dry run.
func (r *Registry) DefaultGCOptions() GCOptions { return GCOptions{Grace: r.cfg.GCGrace} }

// Where distribution keeps blob data and manifest revisions (its storage
// layout, registry/storage/paths.go), for their modification times.
const storageRoot = "/docker/registry/v2"

func blobDataPath(d digest.Digest) string {
	return path.Join(storageRoot, "blobs", d.Algorithm().String(), d.Encoded()[:2], d.Encoded(), "data")
}

func revisionPath(repo string, d digest.Digest) string {
	return path.Join(storageRoot, "repositories", repo, "_manifests", "revisions", d.Algorithm().String(), d.Encoded(), "link")
}

// Collect removes what no tag reaches, while pushes go on:
//
//   - mark: every tag of every repository, and every manifest younger than
//     the grace, with everything they reference (an index's images, an
//     image's config and layers);
//   - manifests neither marked nor young are removed from their
//     repository (images a tag pointed at before it was overwritten or
//     deleted);
//   - blobs neither marked nor young are removed, with the repositories'
//     links to them;
//   - uploads that received nothing for Config.UploadMaxAge are removed
//     (SweepUploads, which also runs on its own, more often).
//
// Blobs are shared by every app (by digest), so one collection covers
// the whole registry. The grace is what makes it safe to run while
// clients push, on this process or another: a push uploads its blobs
// before its manifest, and a blob uploaded within the grace is kept.
func (r *Registry) Collect(ctx context.Context, opts GCOptions) (GCReport, error) {
	rep := GCReport{DryRun: opts.Grace >= 0 && opts.DryRun}
	if opts.Grace < 0 {
		return rep, errors.New("oci: the grace must not be negative")
	}
	cutoff := time.Now().Add(-opts.Grace)
	young := func(p string) (bool, error) {
		fi, err := r.driver.Stat(ctx, p)
		if err != nil {
			return false, err
		}
		return fi.ModTime().After(cutoff), nil
	}

	marked := map[digest.Digest]bool{}
	type repoDigest struct {
		repo string
		d    digest.Digest
		tags []string
	}
	var oldManifests, links []repoDigest
	repos, ok := r.ns.(distribution.RepositoryEnumerator)
	if !ok {
		return rep, errors.New("oci: the registry cannot enumerate its repositories")
	}
	err := repos.Enumerate(ctx, func(name string) error {
		named, err := reference.WithName(name)
		if err != nil {
			return fmt.Errorf("oci: repository %q: %w", name, err)
		}
		repo, err := r.ns.Repository(ctx, named)
		if err != nil {
			return err
		}
		ms, err := repo.Manifests(ctx)
		if err != nil {
			return err
		}
		mark := func(d digest.Digest) error { return markManifest(ctx, ms, d, marked) }
		tagService := repo.Tags(ctx)
		tags, err := tagService.All(ctx)
		var unknown distribution.ErrRepositoryUnknown
		if err != nil && !errors.As(err, &unknown) {
			return fmt.Errorf("oci: listing the tags of %s: %w", name, err)
		}
		for _, tag := range tags {
			desc, err := tagService.Get(ctx, tag)
			if err != nil {
				var tu distribution.ErrTagUnknown
				if errors.As(err, &tu) {
					continue // untagged meanwhile
				}
				return err
			}
			if err := mark(desc.Digest); err != nil {
				return err
			}
		}
		if me, ok := ms.(distribution.ManifestEnumerator); ok {
			err := me.Enumerate(ctx, func(d digest.Digest) error {
				if marked[d] {
					return nil
				}
				y, err := young(revisionPath(name, d))
				if err != nil && !isPathNotFound(err) {
					return err
				}
				if y {
					return mark(d)
				}
				oldManifests = append(oldManifests, repoDigest{repo: name, d: d, tags: tags})
				return nil
			})
			if err != nil && !isPathNotFound(err) {
				return err
			}
		}
		if be, ok := repo.Blobs(ctx).(distribution.BlobEnumerator); ok {
			err := be.Enumerate(ctx, func(d digest.Digest) error {
				links = append(links, repoDigest{repo: name, d: d})
				return nil
			})
			if err != nil && !isPathNotFound(err) {
				return err
			}
		}
		return nil
	})
	if err != nil && !isPathNotFound(err) {
		return rep, fmt.Errorf("oci: marking: %w", err)
	}

	vacuum := storage.NewVacuum(ctx, r.driver)
	for _, m := range oldManifests {
		if marked[m.d] {
			continue
		}
		rep.ManifestsDeleted++
		if !rep.DryRun {
			if err := vacuum.RemoveManifest(m.repo, m.d, m.tags); err != nil && !isPathNotFound(err) {
				return rep, fmt.Errorf("oci: removing manifest %s of %s: %w", m.d, m.repo, err)
			}
		}
	}

	deleted := map[digest.Digest]bool{}
	err = r.ns.Blobs().Enumerate(ctx, func(d digest.Digest) error {
		if marked[d] {
			rep.BlobsKept++
			return nil
		}
		fi, err := r.driver.Stat(ctx, blobDataPath(d))
		if isPathNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.ModTime().After(cutoff) {
			rep.BlobsKept++
			return nil
		}
		deleted[d] = true
		rep.BlobsDeleted++
		rep.BytesFreed += fi.Size()
		return nil
	})
	if err != nil && !isPathNotFound(err) {
		return rep, fmt.Errorf("oci: listing blobs: %w", err)
	}
	if !rep.DryRun {
		for d := range deleted {
			if err := vacuum.RemoveBlob(d.String()); err != nil && !isPathNotFound(err) {
				return rep, fmt.Errorf("oci: removing blob %s: %w", d, err)
			}
		}
		for _, l := range links {
			if deleted[l.d] {
				if err := vacuum.RemoveLayer(l.repo, l.d); err != nil && !isPathNotFound(err) {
					return rep, fmt.Errorf("oci: removing the link to %s from %s: %w", l.d, l.repo, err)
				}
			}
		}
	}

	if rep.DryRun {
		return rep, nil
	}
	purged, err := r.SweepUploads(ctx, time.Now())
	rep.UploadsPurged = purged
	return rep, err
}

// markManifest marks a manifest and, recursively, what it references.
func markManifest(ctx context.Context, ms distribution.ManifestService, d digest.Digest, marked map[digest.Digest]bool) error {
	if marked[d] {
		return nil
	}
	marked[d] = true
	m, err := ms.Get(ctx, d)
	if err != nil {
		var unknown distribution.ErrManifestUnknownRevision
		if errors.As(err, &unknown) || errors.Is(err, distribution.ErrBlobUnknown) {
			return nil // deleted meanwhile
		}
		return fmt.Errorf("oci: reading manifest %s: %w", d, err)
	}
	for _, ref := range m.References() {
		if marked[ref.Digest] {
			continue
		}
		if ok, err := ms.Exists(ctx, ref.Digest); err == nil && ok {
			if err := markManifest(ctx, ms, ref.Digest, marked); err != nil {
				return err
			}
			continue
		}
		marked[ref.Digest] = true
	}
	return nil
}

func isPathNotFound(err error) bool {
	var nf storagedriver.PathNotFoundError
	return errors.As(err, &nf)
}

// CollectEvery collects garbage with the configured grace every interval
// until ctx ends; failures go to onErr.
func (r *Registry) CollectEvery(ctx context.Context, every time.Duration, onErr func(error)) {
	periodic.Run(ctx, every, func(ctx context.Context) error { _, err := r.Collect(ctx, r.DefaultGCOptions()); return err }, onErr)
}
