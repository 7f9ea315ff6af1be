package store

import (
	"context"
	"errors"
	"fmt"
)

// ErrExists: Load met a record whose id the instance holds already.
var ErrExists = errors.New("store: already exists")

// Snapshot is a read-only view of everything a store holds, for a backup
// or an export: the instances' records (every type, trashed ones too) and
// counters, and the service documents. Each store says how consistent its
// view is (the embedded store: one read transaction, a single moment;
// MongoDB: see its package documentation). Reads stream: a Snapshot holds
// no more than one batch of records in memory. A Snapshot is used by one
// goroutine and must be closed.
//
// Left out: the change feed (a restored store starts a new one), the
// declared types and indexes (Declare makes them again from the
// releases) and the stores' own bookkeeping (usage is counted again as
// records are loaded).
type Snapshot interface {
	// Instances returns the ids of the instances that hold records or
	// counters, sorted.
	Instances(ctx context.Context) ([]string, error)
	// Records calls fn with every record of an instance, of every type,
	// trashed or not, in an order of the store's (the embedded store: by
	// type then id). fn may keep the record. An error from fn stops the
	// walk and is returned.
	Records(ctx context.Context, inst string, fn func(*Record) error) error
	// Counters returns an instance's counters (AddCounters); nil when it
	// has none.
	Counters(ctx context.Context, inst string) (map[string]int64, error)
	// DocKinds returns the kinds of the stored service documents, sorted.
	DocKinds(ctx context.Context) ([]string, error)
	// Docs calls fn with every document of a kind, in key order.
	Docs(ctx context.Context, kind string, fn func(key string, doc []byte) error) error
	// Close ends the view.
	Close() error
}

// PrepareRecords is what every store checks of the records handed to
// Load: a type and an id, values of Record's kinds (NormalizeValue), times
// in UTC. It returns normalized copies; an error names the record.
func PrepareRecords(recs []*Record) ([]*Record, error) {
	out := make([]*Record, len(recs))
	for i, r := range recs {
		if r == nil || r.Type == "" || r.ID == "" {
			return nil, fmt.Errorf("store: record %d: a record needs a type and an id", i)
		}
		c := *r
		c.Created, c.Updated = r.Created.UTC(), r.Updated.UTC()
		if r.Trashed != nil {
			t := r.Trashed.UTC()
			c.Trashed = &t
		}
		c.Fields = make(map[string]any, len(r.Fields))
		for k, v := range r.Fields {
			n, err := NormalizeValue(k, v)
			if err != nil {
				return nil, fmt.Errorf("store: %s %s: %w", r.Type, r.ID, err)
			}
			c.Fields[k] = n
		}
		out[i] = &c
	}
	return out, nil
}
