package oci

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/opencontainers/go-digest"
)

// Usage is what an app's images take up in the registry: the content of
// its repositories {app}/{name}, as GET /admin/v1/apps/{app}/usage shows
// it.
type Usage struct {
	// Repositories are the app's repositories holding a manifest (those
	// the catalog lists).
	Repositories int `json:"repositories"`
	// Manifests are the manifests of those repositories (images, indexes
	// and artifacts, tagged or not), one per repository that holds it.
	Manifests int `json:"manifests"`
	// Tags are the tags of those repositories: the function versions and
	// any artifact tags.
	Tags int `json:"tags"`
	// Blobs are the distinct blobs the app's repositories link (layers,
	// configs and the manifests themselves) and Bytes their size: a blob
	// that several repositories (or digests) link is counted once.
	Blobs int   `json:"blobs"`
	Bytes int64 `json:"bytes"`
	// Uploads are the app's unfinished uploads and UploadBytes what they
	// received so far (swept once idle for Config.UploadMaxAge).
	Uploads     int   `json:"uploads"`
	UploadBytes int64 `json:"uploadBytes"`
}

// IsZero reports whether the registry holds nothing of the app.
func (u Usage) IsZero() bool { return u == Usage{} }

// Usage counts what app's repositories hold. It reads the links of the
// app's repositories only (the blobs themselves are shared by every app,
// keyed by digest), so its cost follows the app's content, not the
// registry's. An app whose name no repository can have (not a registry
// name) holds nothing.
func (r *Registry) Usage(ctx context.Context, app string) (Usage, error) {
	var u Usage
	if !validName(app) {
		return u, nil
	}
	repos, err := r.driver.List(ctx, path.Join(storageRoot, "repositories", app))
	if isPathNotFound(err) {
		return u, nil
	}
	if err != nil {
		return u, fmt.Errorf("oci: listing the repositories of %s: %w", app, err)
	}
	blobs := map[digest.Digest]bool{}
	for _, repo := range repos {
		manifests, err := r.links(ctx, path.Join(repo, "_manifests", "revisions"))
		if err != nil {
			return u, err
		}
		if len(manifests) > 0 {
			u.Repositories++
		}
		u.Manifests += len(manifests)
		tags, err := r.list(ctx, path.Join(repo, "_manifests", "tags"))
		if err != nil {
			return u, err
		}
		u.Tags += len(tags)
		layers, err := r.links(ctx, path.Join(repo, "_layers"))
		if err != nil {
			return u, err
		}
		for d := range manifests {
			blobs[d] = true
		}
		for d := range layers {
			blobs[d] = true
		}
		uploads, err := r.list(ctx, path.Join(repo, uploadsDir))
		if err != nil {
			return u, err
		}
		for _, up := range uploads {
			fi, err := r.driver.Stat(ctx, path.Join(up, "data"))
			if isPathNotFound(err) {
				continue // finished or swept meanwhile, or nothing received yet
			}
			if err != nil {
				return u, fmt.Errorf("oci: reading upload %s: %w", path.Base(up), err)
			}
			u.Uploads++
			u.UploadBytes += fi.Size()
		}
	}
	for d := range blobs {
		fi, err := r.driver.Stat(ctx, blobDataPath(d))
		if isPathNotFound(err) {
			continue // collected meanwhile
		}
		if err != nil {
			return u, fmt.Errorf("oci: reading blob %s: %w", d, err)
		}
		u.Blobs++
		u.Bytes += fi.Size()
	}
	return u, nil
}

// links reads the links under dir, laid out <algorithm>/<encoded>/link
// (a repository's _layers and _manifests/revisions), and returns the
// digests they point to: the blob's canonical digest, also for a link
// under another digest (a sha512 push).
func (r *Registry) links(ctx context.Context, dir string) (map[digest.Digest]bool, error) {
	out := map[digest.Digest]bool{}
	algs, err := r.list(ctx, dir)
	if err != nil {
		return nil, err
	}
	for _, alg := range algs {
		entries, err := r.list(ctx, alg)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			raw, err := r.driver.GetContent(ctx, path.Join(e, "link"))
			if isPathNotFound(err) {
				continue // removed meanwhile
			}
			if err != nil {
				return nil, fmt.Errorf("oci: reading link %s: %w", e, err)
			}
			d, err := digest.Parse(strings.TrimSpace(string(raw)))
			if err != nil {
				continue // not a link distribution wrote; nothing it serves
			}
			out[d] = true
		}
	}
	return out, nil
}

// list is the driver's List with a missing directory empty.
func (r *Registry) list(ctx context.Context, dir string) ([]string, error) {
	entries, err := r.driver.List(ctx, dir)
	if isPathNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oci: listing %s: %w", dir, err)
	}
	return entries, nil
}
