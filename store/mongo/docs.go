package mongo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/corehq/core/store"
)

// Service documents live in the docs collection: _id "<kind>/<key>", the
// kind and key again as k and key, the bytes as d. A kind holds no '/', so
// the documents of a kind are the _id range ["<kind>/", "<kind>0").

// docDoc is a service document as stored.
type docDoc struct {
	ID   string `bson:"_id"`
	Kind string `bson:"k"`
	Key  string `bson:"key"`
	Data []byte `bson:"d"`
}

func checkDoc(kind, key string) error {
	if kind == "" || key == "" || strings.Contains(kind, "/") {
		return errors.New("mongo: document kind and key must not be empty, and a kind holds no '/'")
	}
	return nil
}

// PutDoc stores a document, replacing any previous one.
func (s *Store) PutDoc(ctx context.Context, kind, key string, doc []byte) error {
	if err := checkDoc(kind, key); err != nil {
		return err
	}
	d := docDoc{ID: kind + "/" + key, Kind: kind, Key: key, Data: bytes.Clone(doc)}
	if d.Data == nil {
		d.Data = []byte{}
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.docs.ReplaceOne(octx, bson.D{{Key: "_id", Value: d.ID}}, d, options.Replace().SetUpsert(true))
	if mongo.IsDuplicateKeyError(err) {
		// Two upserts of a new key at once: one inserted, the other lost
		// the race to insert; now it replaces.
		_, err = s.docs.ReplaceOne(octx, bson.D{{Key: "_id", Value: d.ID}}, d, options.Replace().SetUpsert(true))
	}
	return s.fail(ctx, "storing document", err)
}

// CreateDoc inserts doc unless a document is there already, and returns
// the one stored now (store.Store): a duplicate key means another process
// was first, and its document is read back.
func (s *Store) CreateDoc(ctx context.Context, kind, key string, doc []byte) ([]byte, error) {
	if err := checkDoc(kind, key); err != nil {
		return nil, err
	}
	d := docDoc{ID: kind + "/" + key, Kind: kind, Key: key, Data: bytes.Clone(doc)}
	if d.Data == nil {
		d.Data = []byte{}
	}
	octx, cancel := s.op(ctx)
	_, err := s.docs.InsertOne(octx, d)
	cancel()
	switch {
	case err == nil:
		return d.Data, nil
	case mongo.IsDuplicateKeyError(err):
		return s.GetDoc(ctx, kind, key)
	}
	return nil, s.fail(ctx, "creating document", err)
}

// GetDoc returns a document; store.ErrNotFound when absent.
func (s *Store) GetDoc(ctx context.Context, kind, key string) ([]byte, error) {
	if checkDoc(kind, key) != nil {
		return nil, fmt.Errorf("mongo: document %s/%s: %w", kind, key, store.ErrNotFound)
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	var d docDoc
	err := s.docs.FindOne(octx, bson.D{{Key: "_id", Value: kind + "/" + key}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("mongo: document %s/%s: %w", kind, key, store.ErrNotFound)
	}
	if err != nil {
		return nil, s.fail(ctx, "reading document", err)
	}
	if d.Data == nil {
		d.Data = []byte{}
	}
	return d.Data, nil
}

// ListDocs returns every document of a kind keyed by key.
func (s *Store) ListDocs(ctx context.Context, kind string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if checkDoc(kind, "-") != nil {
		return out, nil
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	cur, err := s.docs.Find(octx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: kind + "/"}, {Key: "$lt", Value: kind + "0"}}}})
	if err != nil {
		return nil, s.fail(ctx, "listing documents", err)
	}
	var docs []docDoc
	if err := cur.All(octx, &docs); err != nil {
		return nil, s.fail(ctx, "listing documents", err)
	}
	for _, d := range docs {
		if d.Data == nil {
			d.Data = []byte{}
		}
		out[d.Key] = d.Data
	}
	return out, nil
}

// DeleteDoc removes a document; deleting a missing one is not an error.
func (s *Store) DeleteDoc(ctx context.Context, kind, key string) error {
	if checkDoc(kind, key) != nil {
		return nil
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.docs.DeleteOne(octx, bson.D{{Key: "_id", Value: kind + "/" + key}})
	return s.fail(ctx, "deleting document", err)
}
