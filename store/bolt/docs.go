package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
)

// Documents live in docs/<kind>/<key>, apart from every instance.

// PutDoc stores a document, replacing any previous one.
func (s *Store) PutDoc(ctx context.Context, kind, key string, doc []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if kind == "" || key == "" {
		return errors.New("bolt: document kind and key must not be empty")
	}
	// bbolt keeps a reference to the value until the commit: copy it so
	// that a caller reusing doc cannot change what is written.
	val := bytes.Clone(doc)
	if val == nil {
		val = []byte{}
	}
	return s.update(func(tx *bbolt.Tx) error {
		kb, err := tx.Bucket(bucketDocs).CreateBucketIfNotExists([]byte(kind))
		if err != nil {
			return err
		}
		return kb.Put([]byte(key), val)
	})
}

// CreateDoc stores doc unless a document is there already, and returns
// the one stored now (store.Store), in one write transaction.
func (s *Store) CreateDoc(ctx context.Context, kind, key string, doc []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if kind == "" || key == "" {
		return nil, errors.New("bolt: document kind and key must not be empty")
	}
	out := bytes.Clone(doc)
	if out == nil {
		out = []byte{}
	}
	err := s.update(func(tx *bbolt.Tx) error {
		kb, err := tx.Bucket(bucketDocs).CreateBucketIfNotExists([]byte(kind))
		if err != nil {
			return err
		}
		if old := kb.Get([]byte(key)); old != nil {
			out = bytes.Clone(old)
			return nil
		}
		return kb.Put([]byte(key), bytes.Clone(out))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetDoc returns a document; store.ErrNotFound when absent.
func (s *Store) GetDoc(ctx context.Context, kind, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var doc []byte
	err := s.view(func(tx *bbolt.Tx) error {
		kb := tx.Bucket(bucketDocs).Bucket([]byte(kind))
		if kb == nil {
			return nil
		}
		if v := kb.Get([]byte(key)); v != nil {
			doc = bytes.Clone(v)
			if doc == nil {
				doc = []byte{}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, fmt.Errorf("bolt: document %s/%s: %w", kind, key, store.ErrNotFound)
	}
	return doc, nil
}

// ListDocs returns every document of a kind keyed by key.
func (s *Store) ListDocs(ctx context.Context, kind string) (map[string][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	err := s.view(func(tx *bbolt.Tx) error {
		kb := tx.Bucket(bucketDocs).Bucket([]byte(kind))
		if kb == nil {
			return nil
		}
		return kb.ForEach(func(k, v []byte) error {
			if v == nil { // a nested bucket: not a document
				return nil
			}
			out[string(k)] = append([]byte{}, v...)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteDoc removes a document; deleting a missing one is not an error.
func (s *Store) DeleteDoc(ctx context.Context, kind, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.update(func(tx *bbolt.Tx) error {
		kb := tx.Bucket(bucketDocs).Bucket([]byte(kind))
		if kb == nil {
			return nil
		}
		return kb.Delete([]byte(key))
	})
}
