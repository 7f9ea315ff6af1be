package gql

import (
	"context"
	"encoding/json"
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

// FileType is the built-in record type of uploaded files (schema's
// prelude): made by uploads only, read like any record.
const FileType = "File"

// FileStatusUploaded is the status of a File whose content is kept whole.
const FileStatusUploaded = "UPLOADED"

// MaxUploadParts bounds the parts (files) of one upload request.
const MaxUploadParts = 100

// maxDirectory bounds an upload's directory, in bytes.
const maxDirectory = 512

// WithContents keeps uploaded files' contents in c (the store's own:
// store.ContentsHolder); without it uploads answer UNAVAILABLE.
func WithContents(c store.Contents) EngineOption {
	return func(e *Engine) { e.contents = c }
}

// UploadPart is one file of an upload: the name its client gave it and
// its content, read once, to its end, before the next part is asked for.
type UploadPart struct {
	Name    string
	Content io.Reader
}

// Upload keeps the files an upload request streams as File records of
// the instance, owned by the caller, in directory ("" for none; names of
// letters, digits, '.', '-' and '_' separated by '/'). parts yields the
// request's parts in order; it may yield at most MaxUploadParts. Each
// content is kept whole and hashed before its record is written; the
// records are written in one store write once every part is kept. A
// failure keeps nothing: a part past the instance's maxFileSize answers
// TOO_LARGE, past its storageBytes quota QUOTA_EXCEEDED. It returns the
// created records as a JSON array, as find answers them.
func (e *Engine) Upload(ctx context.Context, env Env, directory string, parts func(yield func(UploadPart) error) error) ([]byte, error) {
	if e.contents == nil {
		return nil, errcode.New(errcode.Unavailable, "this server keeps no files")
	}
	if env.authErr != nil {
		return nil, env.authErr
	}
	if env.Principal.Kind == auth.Anonymous {
		return nil, errcode.New(errcode.Unauthenticated, "authorization required: uploading a file needs a token in the authorization header")
	}
	dir, err := cleanDirectory(directory)
	if err != nil {
		return nil, err
	}
	c := e.call(env)
	up := &upload{e: e, c: c, dir: dir, limit: env.Instance.Settings.FileSizeLimit()}
	if err := up.measure(ctx); err != nil {
		return nil, err
	}
	err = parts(func(p UploadPart) error { return up.part(ctx, p) })
	if err == nil && len(up.ops) == 0 {
		err = errcode.New(errcode.BadRequest, "the upload holds no file: send one or more multipart/form-data parts with a filename")
	}
	if err == nil {
		err = up.commit(ctx)
	}
	if err != nil {
		up.discard()
		return nil, err
	}
	return up.answer()
}

// call returns the request state of work a door asks of the engine
// outside a GraphQL document.
func (e *Engine) call(env Env) *call {
	return &call{Env: env, schema: env.Schema, log: e.log, now: time.Now().UTC().Truncate(time.Millisecond)}
}

// upload is one Upload underway.
type upload struct {
	e     *Engine
	c     *call
	dir   string
	limit int64 // the instance's maxFileSize
	// room is what the storageBytes quota leaves for contents (bounded
	// false: no quota); fileBytes the instance's content bytes before.
	room      int64
	bounded   bool
	fileBytes int64
	kept      int64 // bytes of the contents kept so far
	// ops are the records to write, one per content kept (nil once
	// written); records what the write made of them.
	ops     []store.Op
	records []*store.Record
}

// measure reads what the instance's quota leaves.
func (u *upload) measure(ctx context.Context) error {
	q := u.c.Instance.Settings.Quota.StorageBytes
	if q <= 0 {
		return nil
	}
	usage, err := u.c.Store.Usage(ctx, u.c.Instance.ID)
	if err != nil {
		return storeError(err)
	}
	u.fileBytes = usage.Counters[tenant.CounterFileBytes]
	u.room, u.bounded = q-usage.StorageBytes-u.fileBytes, true
	return nil
}

// part keeps one part's content and makes its record's op.
func (u *upload) part(ctx context.Context, p UploadPart) error {
	if len(u.ops) == MaxUploadParts {
		return errcode.New(errcode.TooLarge, "an upload may hold at most %d files", MaxUploadParts)
	}
	name, err := cleanName(p.Name)
	if err != nil {
		return err
	}
	limit, byQuota := u.limit, false
	if u.bounded && u.room-u.kept < limit {
		limit, byQuota = u.room-u.kept, true
		if limit <= 0 {
			return u.quotaExceeded(1)
		}
	}
	id := store.NewID()
	sn := &sniffer{r: p.Content}
	w, err := u.e.contents.Put(ctx, u.c.Instance.ID, id, sn, limit)
	switch {
	case errors.Is(err, store.ErrTooLarge) && byQuota:
		return u.quotaExceeded(limit + 1)
	case errors.Is(err, store.ErrTooLarge):
		return errcode.New(errcode.TooLarge, "file %q is larger than the instance's maxFileSize of %d bytes; nothing was kept", name, u.limit)
	case err != nil:
		return storeError(err)
	}
	typ := media.Sniff(sn.head)
	ext := media.Extension(typ)
	set := map[string]any{
		"name": name, "directory": u.dir, "path": joinPath(u.dir, name), "extension": ext,
		"type": typ, "size": w.Size, "status": FileStatusUploaded, "sha256": w.SHA256,
		"url": map[string]any{"path": FilePath(u.c.Instance.ID, id, ext)},
	}
	u.ops = append(u.ops, store.Op{Kind: store.OpUpsert, Type: FileType, ID: id, New: true, Set: set, Now: u.c.now,
		CreatedBy: u.c.Principal.AccountID})
	u.kept += w.Size
	if media.IsImage(typ) {
		u.measureImage(ctx, id, set)
	}
	return nil
}

// measureImage sets an image's width and height from its header; an
// image whose header cannot be read is kept as a file without them.
func (u *upload) measureImage(ctx context.Context, id string, set map[string]any) {
	r, err := u.e.contents.Open(ctx, u.c.Instance.ID, id)
	if err != nil {
		return
	}
	defer r.Close()
	if w, h, err := media.Dimensions(r); err == nil {
		set["width"], set["height"] = int64(w), int64(h)
	}
}

// quotaExceeded is the answer to contents past the storageBytes quota.
func (u *upload) quotaExceeded(over int64) error {
	q := u.c.Instance.Settings.Quota.StorageBytes
	return tenant.QuotaExceeded(u.c.Instance, &store.QuotaError{Quota: "storageBytes", Limit: q, Usage: q - u.room + u.kept + over})
}

// commit writes the records, within the quota the files leave to them,
// and counts the files.
func (u *upload) commit(ctx context.Context) error {
	quota := u.c.Instance.Settings.Quota.Store()
	if quota.StorageBytes > 0 {
		quota.StorageBytes = max(1, quota.StorageBytes-u.fileBytes-u.kept)
	}
	res, err := u.c.writeWithin(ctx, u.ops, quota)
	if err != nil {
		return storeError(err)
	}
	u.records = make([]*store.Record, len(res))
	for i, r := range res {
		u.records[i] = r.Record
	}
	u.ops = nil
	err = u.c.Store.AddCounters(ctx, map[string]map[string]int64{u.c.Instance.ID: {
		tenant.CounterFiles: int64(len(res)), tenant.CounterFileBytes: u.kept}})
	if err != nil {
		u.e.log.Warn("counting uploaded files failed", zap.String("instance", u.c.Instance.ID), zap.Error(err))
	}
	return nil
}

// discard removes the contents kept for records that were not written.
func (u *upload) discard() {
	for _, op := range u.ops {
		if err := u.e.contents.Delete(context.WithoutCancel(context.Background()), u.c.Instance.ID, op.ID); err != nil {
			u.e.log.Warn("removing the content of a failed upload failed (the sweep will)", zap.String("instance", u.c.Instance.ID), zap.Error(err))
		}
	}
}

// answer is the created records as JSON.
func (u *upload) answer() ([]byte, error) {
	out := make([]map[string]any, len(u.records))
	for i, r := range u.records {
		out[i] = fileJSON(u.c, r)
	}
	return json.Marshal(out)
}

// fileJSON is a File record as find answers it with every field selected.
func fileJSON(c *call, r *store.Record) map[string]any {
	m := make(map[string]any, len(r.Fields)+1)
	for k, v := range r.Fields {
		m[k] = v
	}
	core := map[string]any{"id": r.ID, "created": formatTime(r.Created), "updated": formatTime(r.Updated),
		"instanceId": c.Instance.ID}
	if r.CreatedBy != "" {
		core["createdBy"] = r.CreatedBy
	}
	m["core"] = core
	return m
}

// FilePath is the download path of a file's content.
func FilePath(instanceID, fileID, ext string) string {
	return "/file/" + instanceID + "-" + fileID + "." + ext
}

// sniffer keeps the first media.SniffLen bytes read through it.
type sniffer struct {
	r    io.Reader
	head []byte
}

func (s *sniffer) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if room := media.SniffLen - len(s.head); room > 0 && n > 0 {
		s.head = append(s.head, p[:min(n, room)]...)
	}
	return n, err
}

// cleanDirectory checks an upload's directory and returns it without
// leading or trailing slashes.
func cleanDirectory(d string) (string, error) {
	d = strings.Trim(d, "/")
	if len(d) > maxDirectory {
		return "", errcode.New(errcode.BadRequest, "the directory is longer than %d bytes", maxDirectory)
	}
	if d == "" {
		return "", nil
	}
	for _, seg := range strings.Split(d, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.Trim(seg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
			return "", errcode.New(errcode.BadRequest, "directory %q: each name between slashes must be letters, digits, '.', '-' or '_', and not . or ..", d)
		}
	}
	return d, nil
}

// maxName bounds a file's name, in bytes.
const maxName = 255

// cleanName checks a part's filename: the last element of what the
// client sent (a browser may send a path), at most maxName bytes,
// without control characters.
func cleanName(n string) (string, error) {
	if i := strings.LastIndexAny(n, `/\`); i >= 0 {
		n = n[i+1:]
	}
	if n == "" || n == "." || n == ".." {
		return "", errcode.New(errcode.BadRequest, "each part needs a filename (Content-Disposition: form-data; name=...; filename=...)")
	}
	if len(n) > maxName {
		return "", errcode.New(errcode.BadRequest, "the filename %.40q… is longer than %d bytes", n, maxName)
	}
	for _, r := range n {
		if r < 0x20 || r == 0x7f {
			return "", errcode.New(errcode.BadRequest, "the filename %q holds a control character", n)
		}
	}
	return n, nil
}

func joinPath(dir, name string) string {
	if dir == "" {
		return "/" + name
	}
	return "/" + dir + "/" + name
}
