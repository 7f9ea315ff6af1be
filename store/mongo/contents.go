package mongo

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/corehq/core/store"
)

// contentsBucket names the GridFS bucket of file contents (collections
// files.files and files.chunks).
const contentsBucket = "files"

// Contents returns the store's file contents: GridFS in the store's own
// database, so every process on it serves the same files. A content's
// GridFS id is "{instance}:{id}" and its filename the instance. GridFS
// writes the file document after the last chunk, so a content is never
// seen in part; a crash mid-upload leaves chunks without a file document
// (see Sweep).
func (s *Store) Contents() store.Contents {
	return &gridContents{s: s, bucket: s.db.GridFSBucket(options.GridFSBucket().SetName(contentsBucket))}
}

// gridContents is store.Contents on GridFS.
type gridContents struct {
	s      *Store
	bucket *mongo.GridFSBucket
}

func contentID(inst, id string) string { return inst + ":" + id }

func (g *gridContents) Put(ctx context.Context, inst, id string, r io.Reader, limit int64) (store.Written, error) {
	if err := store.CheckContentName(inst, id); err != nil {
		return store.Written{}, err
	}
	up, err := g.bucket.OpenUploadStreamWithID(ctx, contentID(inst, id), inst)
	if err != nil {
		return store.Written{}, g.s.fail(ctx, "opening a content upload", err)
	}
	w, err := store.CopyContent(ctx, up, r, limit)
	if err != nil {
		_ = up.Abort() // removes the chunks written
		return store.Written{}, err
	}
	if err := up.Close(); err != nil {
		return store.Written{}, g.s.fail(ctx, "writing a content", err)
	}
	return w, nil
}

func (g *gridContents) Open(ctx context.Context, inst, id string) (store.Content, error) {
	if store.CheckContentName(inst, id) != nil {
		return nil, store.ErrNotFound
	}
	c := &gridContent{ctx: ctx, bucket: g.bucket, id: contentID(inst, id)}
	if err := c.open(); err != nil {
		if errors.Is(err, mongo.ErrFileNotFound) {
			return nil, store.ErrNotFound
		}
		return nil, g.s.fail(ctx, "opening a content", err)
	}
	c.size = c.ds.GetFile().Length
	return c, nil
}

// gridContent reads a GridFS file and seeks in it: forward by skipping,
// backward by opening the stream again.
type gridContent struct {
	ctx    context.Context
	bucket *mongo.GridFSBucket
	id     string
	ds     *mongo.GridFSDownloadStream
	size   int64
	// at is where ds is; want where the next Read starts.
	at, want int64
}

func (c *gridContent) open() error {
	ds, err := c.bucket.OpenDownloadStream(c.ctx, c.id)
	if err != nil {
		return err
	}
	c.ds, c.at = ds, 0
	return nil
}

func (c *gridContent) Size() int64 { return c.size }

func (c *gridContent) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += c.want
	case io.SeekEnd:
		offset += c.size
	default:
		return 0, errors.New("mongo: content seek: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("mongo: content seek: negative position")
	}
	c.want = offset
	return offset, nil
}

func (c *gridContent) Read(p []byte) (int, error) {
	if c.want >= c.size {
		return 0, io.EOF
	}
	if c.want < c.at {
		_ = c.ds.Close()
		if err := c.open(); err != nil {
			return 0, err
		}
	}
	if c.want > c.at {
		n, err := c.ds.Skip(c.want - c.at)
		c.at += n
		if err != nil {
			return 0, err
		}
	}
	n, err := c.ds.Read(p)
	c.at += int64(n)
	c.want = c.at
	return n, err
}

func (c *gridContent) Close() error { return c.ds.Close() }

func (g *gridContents) Delete(ctx context.Context, inst, id string) error {
	if store.CheckContentName(inst, id) != nil {
		return nil
	}
	if err := g.bucket.Delete(ctx, contentID(inst, id)); err != nil && !errors.Is(err, mongo.ErrFileNotFound) {
		return g.s.fail(ctx, "deleting a content", err)
	}
	return nil
}

func (g *gridContents) DropInstance(ctx context.Context, inst string) error {
	_, err := g.sweep(ctx, bson.D{{Key: "filename", Value: inst}}, nil)
	return err
}

// Sweep removes the contents uploaded before before that have no record,
// and the chunks of uploads that a crash interrupted: chunks written
// before before (their ObjectIDs tell when) of an id with no file
// document.
func (g *gridContents) Sweep(ctx context.Context, before time.Time, has func(ctx context.Context, inst, id string) (bool, error)) (int, error) {
	n, err := g.sweep(ctx, bson.D{{Key: "uploadDate", Value: bson.D{{Key: "$lt", Value: before}}}}, has)
	if err != nil {
		return n, err
	}
	return n, g.sweepChunks(ctx, before)
}

// sweep deletes the contents filter matches that has says have no record
// (has nil: all of them).
func (g *gridContents) sweep(ctx context.Context, filter bson.D, has func(ctx context.Context, inst, id string) (bool, error)) (int, error) {
	cur, err := g.bucket.Find(ctx, filter)
	if err != nil {
		return 0, g.s.fail(ctx, "listing contents", err)
	}
	var files []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &files); err != nil {
		return 0, g.s.fail(ctx, "listing contents", err)
	}
	removed := 0
	for _, f := range files {
		inst, id, ok := strings.Cut(f.ID, ":")
		if ok && has != nil {
			keep, err := has(ctx, inst, id)
			if err != nil {
				return removed, err
			}
			if keep {
				continue
			}
		}
		if err := g.bucket.Delete(ctx, f.ID); err != nil && !errors.Is(err, mongo.ErrFileNotFound) {
			return removed, g.s.fail(ctx, "deleting a content", err)
		}
		removed++
	}
	return removed, nil
}

// sweepChunks removes the chunks written before before whose file
// document does not exist.
func (g *gridContents) sweepChunks(ctx context.Context, before time.Time) error {
	chunks := g.bucket.GetChunksCollection()
	old := bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: bson.NewObjectIDFromTimestamp(before)}}}}
	var ids []any
	if err := chunks.Distinct(ctx, "files_id", old).Decode(&ids); err != nil {
		return g.s.fail(ctx, "listing content chunks", err)
	}
	for _, id := range ids {
		err := g.bucket.GetFilesCollection().FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Err()
		if errors.Is(err, mongo.ErrNoDocuments) {
			_, err = chunks.DeleteMany(ctx, bson.D{{Key: "files_id", Value: id}})
		}
		if err != nil {
			return g.s.fail(ctx, "removing content chunks", err)
		}
	}
	return nil
}
