package gql

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/media"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// File is what a download serves of a File record.
type File struct {
	ID        string
	Name      string
	Type      string
	Extension string
	SHA256    string
	Size      int64
	Updated   time.Time
}

// errNoFile is the one answer to a file that is missing, trashed, of
// another extension, or that the caller may not read: the caller learns
// nothing of a file it may not read.
func errNoFile() error {
	return errcode.New(errcode.NotFound, "no such file")
}

// OpenFile opens the content of the File record id of env's instance,
// served under extension ext, for env's caller, who reads it under the
// rules of every record (the owner rule, AccessRight grants, anonymous
// callers only where the instance allows anonymous requests and a grant
// to anonymous lets them). The caller closes the content.
//
// thumb, when not "", asks for a thumbnail of an image (a size of
// media.Thumbs), made the first time it is asked for and kept beside
// the content; File then describes the thumbnail's type and tag.
func (e *Engine) OpenFile(ctx context.Context, env Env, id, ext, thumb string) (File, io.ReadSeekCloser, error) {
	if env.authErr != nil {
		return File{}, nil, env.authErr
	}
	if e.contents == nil {
		return File{}, nil, errNoFile()
	}
	c := e.call(env)
	if env.Principal.Kind == auth.Anonymous {
		if !env.Instance.Settings.AnonymousRequests {
			return File{}, nil, errNoFile()
		}
		if err := env.admitAnonymous(); err != nil {
			return File{}, nil, err
		}
	}
	r, err := c.Store.Get(ctx, env.Instance.ID, FileType, id)
	if errors.Is(err, store.ErrNotFound) {
		return File{}, nil, errNoFile()
	}
	if err != nil {
		return File{}, nil, storeError(err)
	}
	f := fileOf(r)
	if r.Trashed != nil || f.Extension != ext || !visible(withCall(ctx, c), c, r) {
		return File{}, nil, errNoFile()
	}
	if thumb != "" {
		return e.openThumb(ctx, env.Instance.ID, f, thumb)
	}
	content, err := e.contents.Open(ctx, env.Instance.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return File{}, nil, errNoFile()
	}
	if err != nil {
		return File{}, nil, storeError(err)
	}
	return f, content, nil
}

// thumbID is the content id of a file's thumbnail of a size.
func thumbID(id, thumb string) string { return id + "_" + thumb }

// openThumb opens the thumbnail of size thumb of the image f, making and
// keeping it when it is not kept yet.
func (e *Engine) openThumb(ctx context.Context, inst string, f File, thumb string) (File, io.ReadSeekCloser, error) {
	t, err := media.ParseThumb(thumb)
	if err != nil {
		return File{}, nil, errcode.Wrap(errcode.BadRequest, err, "%v", err)
	}
	if !media.IsImage(f.Type) {
		return File{}, nil, errcode.New(errcode.BadRequest, "thumbnails are made of PNG, JPEG, GIF and WebP images; this file is %s", f.Type)
	}
	out := f
	out.SHA256 = f.SHA256 + "-" + thumb
	out.Type = "image/png"
	if media.Essence(f.Type) == "image/jpeg" {
		out.Type = "image/jpeg"
	}
	tid := thumbID(f.ID, thumb)
	if c, err := e.contents.Open(ctx, inst, tid); err == nil {
		return out, c, nil
	}
	src, err := e.contents.Open(ctx, inst, f.ID)
	if errors.Is(err, store.ErrNotFound) {
		return File{}, nil, errNoFile()
	}
	if err != nil {
		return File{}, nil, storeError(err)
	}
	data, _, err := t.Make(src, f.Type)
	_ = src.Close()
	if err != nil {
		return File{}, nil, errcode.Wrap(errcode.BadRequest, err, "no thumbnail can be made of this image: %v", err)
	}
	// Two requests may make it at once: either keeps it, and a failure to
	// keep it still serves what was made.
	if _, err := e.contents.Put(ctx, inst, tid, bytes.NewReader(data), 0); err != nil {
		e.log.Debug("keeping a thumbnail failed", zap.String("instance", inst), zap.Error(err))
	}
	return out, bytesContent{bytes.NewReader(data)}, nil
}

// bytesContent is a thumbnail made now, served from memory.
type bytesContent struct{ *bytes.Reader }

func (bytesContent) Close() error { return nil }

// fileOf reads a File record's fields.
func fileOf(r *store.Record) File {
	str := func(k string) string { s, _ := r.Fields[k].(string); return s }
	f := File{ID: r.ID, Name: str("name"), Type: str("type"), Extension: str("extension"), SHA256: str("sha256"), Updated: r.Updated}
	switch n := r.Fields["size"].(type) {
	case int64:
		f.Size = n
	case float64:
		f.Size = int64(n)
	}
	return f
}

// checkFileWrites refuses writes that would make or change a File
// record other than by uploading: a reference to an existing file (an
// upsert naming only its id) is fine.
func checkFileWrites(ops []store.Op) error {
	for _, op := range ops {
		if op.Type == FileType && op.Kind == store.OpUpsert && len(op.Set) > 0 {
			return errcode.New(errcode.BadRequest, "File records are made by uploads (POST /upload/{directory}); a record may reference one by its id")
		}
	}
	return nil
}

// deletedFiles returns the File records ops delete, by id, read before
// the write (nil when it deletes none).
func (c *call) deletedFiles(ctx context.Context, ops []store.Op) (map[string]*store.Record, error) {
	var ids []string
	for _, op := range ops {
		if op.Type == FileType && op.Kind == store.OpDelete {
			ids = append(ids, op.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return c.Store.GetMany(ctx, c.Instance.ID, FileType, ids)
}

// forgetFiles removes the contents of the File records a write deleted
// (read before it: deletedFiles) and counts them out. A content that
// cannot be removed now is left to the sweep.
func (c *call) forgetFiles(ctx context.Context, before map[string]*store.Record, ops []store.Op, res []store.OpResult) {
	if len(before) == 0 {
		return
	}
	var files, bytes int64
	for i, op := range ops {
		r := before[op.ID]
		if op.Type != FileType || op.Kind != store.OpDelete || r == nil || i >= len(res) || !res[i].Changed {
			continue
		}
		delete(before, op.ID) // once however many ops name it
		files++
		bytes += fileOf(r).Size
		if c.contents != nil {
			for _, id := range append([]string{r.ID}, thumbIDs(r.ID)...) {
				if err := c.contents.Delete(ctx, c.Instance.ID, id); err != nil {
					c.log.Warn("removing a deleted file's content failed (the sweep will)", zap.String("instance", c.Instance.ID), zap.Error(err))
				}
			}
		}
	}
	if files == 0 {
		return
	}
	err := c.Store.AddCounters(ctx, map[string]map[string]int64{c.Instance.ID: {
		tenant.CounterFiles: -files, tenant.CounterFileBytes: -bytes}})
	if err != nil {
		c.log.Warn("counting deleted files failed", zap.String("instance", c.Instance.ID), zap.Error(err))
	}
}

// recordQuota is the quota a write of records runs within: the
// instance's, its storageBytes less what its files' contents take.
func (c *call) recordQuota(ctx context.Context) (store.Quota, error) {
	q := c.Instance.Settings.Quota.Store()
	if q.StorageBytes <= 0 {
		return q, nil
	}
	u, err := c.Store.Usage(ctx, c.Instance.ID)
	if err != nil {
		return q, storeError(err)
	}
	q.StorageBytes = max(1, q.StorageBytes-u.Counters[tenant.CounterFileBytes])
	return q, nil
}

// SweepFiles removes the contents put before before that no File record
// names (an upload interrupted between keeping its content and writing
// its record, a delete whose content removal failed) and the leftovers
// of interrupted writes. Trashed records keep their contents.
func (e *Engine) SweepFiles(ctx context.Context, before time.Time) (int, error) {
	if e.contents == nil {
		return 0, nil
	}
	return e.contents.Sweep(ctx, before, func(ctx context.Context, inst, id string) (bool, error) {
		id, _, _ = strings.Cut(id, "_") // a thumbnail's file
		_, err := e.store.Get(ctx, inst, FileType, id)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	})
}

// thumbIDs are the content ids of every thumbnail a file may have.
func thumbIDs(id string) []string {
	out := make([]string, len(media.Thumbs))
	for i, t := range media.Thumbs {
		out[i] = thumbID(id, t)
	}
	return out
}
