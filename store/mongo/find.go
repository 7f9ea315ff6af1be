package mongo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// getManyChunk bounds the ids of one $in read.
const getManyChunk = 1000

// Get returns one record, trashed or not; store.ErrNotFound when absent.
func (s *Store) Get(ctx context.Context, inst, typ, id string) (*store.Record, error) {
	if err := checkName("instance", inst); err != nil {
		return nil, err
	}
	if err := checkName("type", typ); err != nil {
		return nil, fmt.Errorf("mongo: %s %s: %w", typ, id, store.ErrNotFound)
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	var doc bson.M
	err := s.records.FindOne(octx, bson.D{{Key: "_id", Value: recordKey(inst, typ, id)}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("mongo: %s %s: %w", typ, id, store.ErrNotFound)
	}
	if err != nil {
		return nil, s.fail(ctx, "get", err)
	}
	return decodeRecord(doc)
}

// GetMany returns the records among ids that exist, keyed by id, reading
// them with one $in query per thousand ids.
func (s *Store) GetMany(ctx context.Context, inst, typ string, ids []string) (map[string]*store.Record, error) {
	if err := checkName("instance", inst); err != nil {
		return nil, err
	}
	out := make(map[string]*store.Record, len(ids))
	if checkName("type", typ) != nil || len(ids) == 0 {
		return out, nil
	}
	seen := make(map[string]bool, len(ids))
	keys := make(bson.A, 0, min(len(ids), getManyChunk))
	flush := func() error {
		if len(keys) == 0 {
			return nil
		}
		recs, err := s.findDocs(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}}, options.Find())
		if err != nil {
			return err
		}
		for _, r := range recs {
			out[r.ID] = r
		}
		keys = keys[:0]
		return nil
	}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		keys = append(keys, recordKey(inst, typ, id))
		if len(keys) == getManyChunk {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// findDocs reads every record a filter selects.
func (s *Store) findDocs(ctx context.Context, filter bson.D, opts *options.FindOptionsBuilder) ([]*store.Record, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	cur, err := s.records.Find(octx, filter, opts)
	if err != nil {
		return nil, s.fail(ctx, "find", err)
	}
	defer cur.Close(context.WithoutCancel(octx))
	var out []*store.Record
	for cur.Next(octx) {
		r, err := s.readRecord(ctx, cur)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := cur.Err(); err != nil {
		return nil, s.fail(ctx, "find", err)
	}
	return out, nil
}

// readRecord decodes the record at cur's position.
func (s *Store) readRecord(ctx context.Context, cur *mongo.Cursor) (*store.Record, error) {
	var doc bson.M
	if err := cur.Decode(&doc); err != nil {
		return nil, s.fail(ctx, "decoding a record", err)
	}
	return decodeRecord(doc)
}

// Find returns the records a query selects, in the query's order.
// Reference hops are resolved first (store.ResolveHops, bounded by
// Config.HopLimit); the filter, the sort and the paging cursors then run as
// one MongoDB query on the instance's index prefix (plan.go). Every record
// read is checked with arcql.Match, and Skip and Limit apply on the server
// when the compiled filter is exact, else while reading.
func (s *Store) Find(ctx context.Context, inst string, q *store.Query) ([]*store.Record, error) {
	if q == nil || q.Type == "" {
		return nil, errors.New("mongo: query without a type")
	}
	if q.Skip < 0 || q.Limit < 0 {
		return nil, errors.New("mongo: negative skip or limit")
	}
	if err := checkName("instance", inst); err != nil {
		return nil, err
	}
	if checkName("type", q.Type) != nil {
		return []*store.Record{}, nil
	}
	filter, err := store.ResolveHops(ctx, s, inst, q.Filter, s.cfg.HopLimit)
	if err != nil {
		return nil, err
	}
	if id, ok := oneID(filter); ok && q.After == "" && q.Before == "" {
		return s.findOne(ctx, inst, q, filter, id)
	}
	var after, before *store.Record
	if q.After != "" {
		if after, err = s.cursor(ctx, inst, q, filter, q.After); err != nil {
			return nil, err
		}
	}
	if q.Before != "" {
		if before, err = s.cursor(ctx, inst, q, filter, q.Before); err != nil {
			return nil, err
		}
	}
	p, err := buildPlan(inst, q, filter, after, before)
	if err != nil {
		return nil, err
	}
	out := []*store.Record{}
	if p.none {
		return out, nil
	}
	cmd := findCommand{filter: p.filter, sort: p.sort}
	if p.exact {
		if q.Skip > 0 {
			cmd.skip = int64(q.Skip)
		}
		if q.Limit > 0 {
			cmd.limit = int64(q.Limit)
		}
	} else if q.Limit > 0 && q.Skip+q.Limit < 1000 {
		cmd.batchSize = int32(q.Skip + q.Limit + 8)
	}
	if q.IDsOnly {
		cmd.projection = projection(filter, q.Sort)
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	cur, err := s.findRecords(octx, cmd)
	if err != nil {
		return nil, s.fail(ctx, "find", err)
	}
	defer cur.Close(context.WithoutCancel(octx))
	skipped := 0
	for cur.Next(octx) {
		r, err := s.readRecord(ctx, cur)
		if err != nil {
			return nil, err
		}
		if (r.Trashed != nil && !q.IncludeTrashed) || !arcql.Match(filter, r) {
			continue
		}
		if after != nil && arcql.CompareSort(q.Sort, r, after) <= 0 {
			continue
		}
		if before != nil && arcql.CompareSort(q.Sort, r, before) >= 0 {
			continue
		}
		if !p.exact && skipped < q.Skip {
			skipped++
			continue
		}
		out = append(out, r)
		if q.Limit > 0 && len(out) >= q.Limit {
			break
		}
	}
	if err := cur.Err(); err != nil {
		return nil, s.fail(ctx, "find", err)
	}
	if q.Backward {
		slices.Reverse(out)
	}
	return out, nil
}

// oneID returns the id a filter names when it selects at most that one
// record: core.id = 'x', or an id list of one id (a hop's sub-filter such
// as colleagues.core.id = $caller becomes the first).
func oneID(f arcql.Expr) (string, bool) {
	switch n := f.(type) {
	case *arcql.Compare:
		if n.Op == arcql.OpEq && n.Value.Kind == arcql.KindString && len(n.Path.Parts) == 1 && n.Path.Parts[0] == "core.id" {
			return n.Value.Str, true
		}
	case *arcql.InIDs:
		if n.Field == "core.id" && len(n.IDs) == 1 {
			return n.IDs[0], true
		}
	}
	return "", false
}

// findOne answers a query whose filter names one record by id with a
// read of its primary key, which every server answers from the _id
// index (the FerretDB test server reads a whole collection for any other
// filter).
func (s *Store) findOne(ctx context.Context, inst string, q *store.Query, filter arcql.Expr, id string) ([]*store.Record, error) {
	r, err := s.Get(ctx, inst, q.Type, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && ((r.Trashed != nil && !q.IncludeTrashed) || !arcql.Match(filter, r) || q.Skip > 0)) {
		return []*store.Record{}, nil
	}
	if err != nil {
		return nil, err
	}
	return []*store.Record{r}, nil
}

// cursor loads a paging cursor's record, which must exist and be one the
// query selects.
func (s *Store) cursor(ctx context.Context, inst string, q *store.Query, filter arcql.Expr, id string) (*store.Record, error) {
	r, err := s.Get(ctx, inst, q.Type, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if r == nil || (r.Trashed != nil && !q.IncludeTrashed) || !arcql.Match(filter, r) {
		return nil, fmt.Errorf("mongo: cursor %s %s: %w", q.Type, id, store.ErrNotFound)
	}
	return r, nil
}

// plan is a Find as MongoDB runs it.
type plan struct {
	filter bson.D
	sort   bson.D
	// exact: every record the filter selects is in the answer, so the
	// server may skip and limit.
	exact bool
	// none: the filter can match nothing.
	none bool
}

// sortKey is one key of the effective order.
type sortKey struct {
	path arcql.Path
	doc  string // the document path
	desc bool
}

// buildPlan turns a query (its filter already free of hops) and its cursor
// records into the MongoDB filter and sort. It is pure: no clock, no I/O.
//
// The filter is the instance and type (the prefix of every record index),
// "not trashed" unless asked, the compiled ArcQL filter, and for each
// cursor the range condition "after (or before) this record in the query's
// order": for keys k1…kn and the id, (k1 > v1) OR (k1 = v1 AND k2 > v2) OR
// … — an index range, never a skip over the records before it. A backward
// query sorts the other way round and Find reverses the page.
func buildPlan(inst string, q *store.Query, filter arcql.Expr, after, before *store.Record) (*plan, error) {
	c, err := compile(filter)
	if err != nil {
		return nil, err
	}
	keys, err := effectiveSort(q.Sort)
	if err != nil {
		return nil, err
	}
	terms := []bson.D{{{Key: fInst, Value: inst}, {Key: fType, Value: q.Type}}}
	if !q.IncludeTrashed {
		terms = append(terms, bson.D{{Key: fTrashed, Value: nil}})
	}
	terms = append(terms, c.pos)
	exact := c.exact
	if after != nil {
		d, ex := position(keys, after, false)
		terms, exact = append(terms, d), exact && ex
	}
	if before != nil {
		d, ex := position(keys, before, true)
		terms, exact = append(terms, d), exact && ex
	}
	p := &plan{filter: andOf(terms...), exact: exact}
	p.none = isNever(p.filter)
	for _, k := range keys {
		dir := 1
		if k.desc != q.Backward {
			dir = -1
		}
		p.sort = append(p.sort, bson.E{Key: k.doc, Value: dir})
	}
	return p, nil
}

// effectiveSort is the query's sort keys up to and including a core.id
// key, ending with the id (ascending) when no key named it: the order of
// arcql.CompareSort.
func effectiveSort(sort []arcql.SortKey) ([]sortKey, error) {
	var keys []sortKey
	for _, k := range sort {
		doc, _, _, err := docPath(k.Path)
		if err != nil {
			return nil, err
		}
		keys = append(keys, sortKey{path: k.Path, doc: doc, desc: k.Desc})
		if doc == fID {
			return keys, nil
		}
	}
	return append(keys, sortKey{path: arcql.Path{Parts: []string{"core.id"}}, doc: fID}), nil
}

// position is the condition "strictly after r in the order of keys" (or
// strictly before it when before is true). exact is false when a key's
// value is a list or an object, where MongoDB's order and arcql's part.
func position(keys []sortKey, r *store.Record, before bool) (bson.D, bool) {
	exact := true
	var alts []bson.D
	var equal []bson.D
	for _, k := range keys {
		v := arcql.SortValue(r, k.path)
		switch v.(type) {
		case map[string]any, []any:
			exact = false
		}
		bv := bsonValue(v)
		greater := k.desc == before
		var step bson.D
		switch {
		case greater && v == nil:
			step = bson.D{{Key: k.doc, Value: bson.D{{Key: "$type", Value: existTypes}}}}
		case greater:
			step = bson.D{{Key: k.doc, Value: bson.D{{Key: "$gt", Value: bv}}}}
		case v == nil:
			step = never // nothing sorts before a missing value
		case k.doc == fID: // never missing
			step = bson.D{{Key: k.doc, Value: bson.D{{Key: "$lt", Value: bv}}}}
		default:
			step = orOf(bson.D{{Key: k.doc, Value: bson.D{{Key: "$lt", Value: bv}}}}, bson.D{{Key: k.doc, Value: nil}})
		}
		alts = append(alts, andOf(append(slices.Clone(equal), step)...))
		if v == nil {
			equal = append(equal, bson.D{{Key: k.doc, Value: nil}})
		} else {
			equal = append(equal, bson.D{{Key: k.doc, Value: bv}})
		}
	}
	return orOf(alts...), exact
}

// bsonValue is a record value as stored: times as BSON dates, object keys
// escaped.
func bsonValue(v any) any {
	switch v := v.(type) {
	case time.Time:
		return dateOf(v)
	case map[string]any, []any:
		if e, err := encodeValue("", v); err == nil {
			return e
		}
	}
	return v
}

// projection selects the metadata of a record and the fields the filter
// and the sort read: what Find needs of a record when the caller wants ids
// only.
func projection(filter arcql.Expr, sort []arcql.SortKey) bson.D {
	proj := bson.D{}
	for _, f := range []string{fType, fID, fCreated, fUpdated, fTrashed, fCreatedBy, fImpl} {
		proj = append(proj, bson.E{Key: f, Value: 1})
	}
	seen := map[string]bool{}
	arcql.Fields(filter, sort, func(name string) {
		if !strings.HasPrefix(name, "core.") && !seen[name] {
			seen[name] = true
			proj = append(proj, bson.E{Key: fFields + "." + escapeKey(name), Value: 1})
		}
	})
	return proj
}
