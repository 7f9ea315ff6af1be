package mongo

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/corehq/core/store"
)

// typeState is what the store keeps of a declared type: its spec, stored in
// the types collection, and its unique fields for quick lookups.
type typeState struct {
	spec   store.TypeSpec
	unique map[string]bool
}

func newTypeState(spec store.TypeSpec) *typeState {
	ts := &typeState{spec: spec, unique: map[string]bool{}}
	for _, f := range spec.Unique {
		ts.unique[f] = true
	}
	return ts
}

var noType = &typeState{unique: map[string]bool{}}

// typeDoc is a declared type as stored.
type typeDoc struct {
	ID      string     `bson:"_id"`
	Inst    string     `bson:"i"`
	Type    string     `bson:"t"`
	Unique  []string   `bson:"unique"`
	Indices []indexSet `bson:"indices"`
	Refs    []string   `bson:"refs"`
}

// indexSet is one @indices set; a document, since not every server stores
// a list directly inside a list.
type indexSet struct {
	Fields []string `bson:"f"`
}

func (d *typeDoc) spec() store.TypeSpec {
	spec := store.TypeSpec{Name: d.Type, Unique: d.Unique, Refs: d.Refs}
	for _, set := range d.Indices {
		spec.Indices = append(spec.Indices, set.Fields)
	}
	return spec
}

// typeState returns the declared state of a type of an instance (noType
// when undeclared). The instance's types are read from the database on
// first use and then kept; a Declare in this process replaces them. A
// Declare made by another process reaches this one when its registry
// declares the same release (tenant's coherence loop).
func (s *Store) typeState(ctx context.Context, inst, typ string) (*typeState, error) {
	types, err := s.instTypes(ctx, inst)
	if err != nil {
		return nil, err
	}
	if ts := types[typ]; ts != nil {
		return ts, nil
	}
	return noType, nil
}

func (s *Store) instTypes(ctx context.Context, inst string) (map[string]*typeState, error) {
	s.mu.RLock()
	types, ok := s.declared[inst]
	s.mu.RUnlock()
	if ok {
		return types, nil
	}
	types, err := s.loadTypes(ctx, inst)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.declared[inst] = types
	s.mu.Unlock()
	return types, nil
}

// loadTypes reads an instance's declared types.
func (s *Store) loadTypes(ctx context.Context, inst string) (map[string]*typeState, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	cur, err := s.types.Find(octx, bson.D{{Key: fInst, Value: inst}})
	if err != nil {
		return nil, s.fail(ctx, "reading declared types", err)
	}
	var docs []typeDoc
	if err := cur.All(octx, &docs); err != nil {
		return nil, s.fail(ctx, "reading declared types", err)
	}
	types := make(map[string]*typeState, len(docs))
	for i := range docs {
		types[docs[i].Type] = newTypeState(docs[i].spec())
	}
	return types, nil
}

// Declare records the types of an instance. It creates the record indexes
// the types need (shared by every instance: led by instance and type, then
// the @indices fields, each @unique field and each reference field), claims
// the values of fields that became unique over the records already stored
// (duplicates fail the Declare with a *store.FieldError wrapping
// store.ErrUnique, and the field stays not unique), and frees the claims of
// fields no longer unique. Records of types no longer declared stay. The
// first Declare of an instance new to the database reads no records: it
// has none (fresh).
func (s *Store) Declare(ctx context.Context, inst string, types []store.TypeSpec) error {
	if err := checkName("instance", inst); err != nil {
		return err
	}
	want := make(map[string]*typeState, len(types))
	for _, spec := range types {
		if err := checkName("type", spec.Name); err != nil {
			return err
		}
		if _, dup := want[spec.Name]; dup {
			return fmt.Errorf("mongo: type %s declared twice", spec.Name)
		}
		for _, f := range spec.Unique {
			if f == "" || strings.Contains(f, "/") {
				return fmt.Errorf("mongo: type %s: bad unique field %q", spec.Name, f)
			}
		}
		want[spec.Name] = newTypeState(spec)
	}
	if err := s.ensureIndexes(ctx, types); err != nil {
		return err
	}
	old, err := s.loadTypes(ctx, inst)
	if err != nil {
		return err
	}
	fresh, err := s.fresh(ctx, inst, old)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if fresh {
			break // no record holds a value to claim
		}
		t := want[name]
		prev := old[name]
		if prev == nil {
			prev = noType
		}
		for _, f := range slices.Sorted(maps.Keys(t.unique)) {
			if prev.unique[f] {
				continue
			}
			if err := s.claimExisting(ctx, inst, name, f); err != nil {
				return err
			}
		}
	}
	// Free the claims of fields (and types) no longer unique.
	for name, prev := range old {
		t := want[name]
		if t == nil {
			t = noType
		}
		for f := range prev.unique {
			if !t.unique[f] {
				if err := s.dropClaims(ctx, inst, name, f); err != nil {
					return err
				}
			}
		}
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	for name, t := range want {
		d := typeDoc{ID: inst + "/" + name, Inst: inst, Type: name, Unique: t.spec.Unique, Refs: t.spec.Refs}
		for _, set := range t.spec.Indices {
			d.Indices = append(d.Indices, indexSet{Fields: set})
		}
		if _, err := s.types.ReplaceOne(octx, bson.D{{Key: "_id", Value: d.ID}}, d, options.Replace().SetUpsert(true)); err != nil {
			return s.fail(ctx, "storing a declared type", err)
		}
	}
	for name := range old {
		if want[name] == nil {
			if _, err := s.types.DeleteOne(octx, bson.D{{Key: "_id", Value: inst + "/" + name}}); err != nil {
				return s.fail(ctx, "removing a declared type", err)
			}
		}
	}
	s.mu.Lock()
	s.declared[inst] = want
	s.mu.Unlock()
	if fresh {
		return s.storeCount(ctx, inst, store.Usage{})
	}
	// An instance stored before usage was kept is counted now, once.
	return s.ensureUsage(ctx, inst)
}

// fresh reports whether an instance whose declared types are old is new
// to the database: nothing declared and no usage document. Every Declare,
// Load and Write leaves a usage document, and every instance stored
// before usage was kept has declared types, so a fresh instance holds no
// record and its Declare has nothing to claim or count. Those are queries
// over the records collection, which every instance shares: MongoDB
// answers them from the {i, t, id} index, but a server that scans for
// them (FerretDB over SQLite pushes down only an _id equality) would read
// every other instance's records first, so that creating an instance
// next to a large one would outlast Config.OpTimeout.
func (s *Store) fresh(ctx context.Context, inst string, old map[string]*typeState) (bool, error) {
	if len(old) > 0 {
		return false, nil
	}
	d, err := s.readUsage(ctx, inst)
	return err == nil && d.ID == "", err
}

// claimExisting claims the values that the stored records of a type hold
// in a field becoming unique. On a duplicate it gives back what it claimed.
func (s *Store) claimExisting(ctx context.Context, inst, typ, field string) error {
	recs, err := s.findDocs(ctx, bson.D{
		{Key: fInst, Value: inst}, {Key: fType, Value: typ},
		{Key: fieldPath([]string{field}), Value: bson.D{{Key: "$exists", Value: true}}},
	}, options.Find())
	if err != nil {
		return err
	}
	claimed := map[string][]string{} // by record id
	for _, r := range recs {
		got, err := s.claim(ctx, inst, typ, r.ID, field, uniqueValues(r.Fields[field]))
		claimed[r.ID] = append(claimed[r.ID], got...)
		if err != nil {
			for id, keys := range claimed {
				s.unclaim(ctx, keys, id)
			}
			return err
		}
	}
	return nil
}

// dropClaims frees every claim of a field of a type.
func (s *Store) dropClaims(ctx context.Context, inst, typ, field string) error {
	octx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.uniques.DeleteMany(octx, bson.D{{Key: fInst, Value: inst}, {Key: fType, Value: typ}, {Key: "f", Value: field}})
	return s.fail(ctx, "freeing unique values", err)
}

// ensureIndexes creates the record indexes the types need and the store
// has not seen yet. The records collection is shared, so one index serves
// a field name in every instance and type; past Config.MaxIndexes none are
// added (queries still work, reading the instance's records of the type).
func (s *Store) ensureIndexes(ctx context.Context, types []store.TypeSpec) error {
	var sets [][]string
	for _, t := range types {
		sets = append(sets, t.Indices...)
		for _, f := range t.Unique {
			sets = append(sets, []string{f})
		}
		for _, f := range t.Refs {
			sets = append(sets, strings.Split(f, "."))
		}
	}
	for _, set := range sets {
		if len(set) == 0 {
			continue
		}
		keys := bson.D{{Key: fInst, Value: 1}, {Key: fType, Value: 1}}
		var names []string
		for _, f := range set {
			p := fieldPath([]string{f})
			if m, ok := metaField[f]; ok { // core.createdBy: a record's metadata
				p = m
			} else if strings.Contains(f, ".") { // a reference inside an embedded object
				p = fieldPath(strings.Split(f, "."))
			}
			keys = append(keys, bson.E{Key: p, Value: 1})
			names = append(names, p)
		}
		name := "i_t_" + strings.Join(names, "_")
		s.mu.RLock()
		known, full := s.indexes[name], len(s.indexes) >= s.cfg.MaxIndexes
		s.mu.RUnlock()
		if known || full {
			continue
		}
		octx, cancel := s.op(ctx)
		_, err := s.records.Indexes().CreateOne(octx, mongo.IndexModel{Keys: keys, Options: options.Index().SetName(name)})
		cancel()
		if err != nil {
			return s.fail(ctx, "creating index "+name, err)
		}
		s.mu.Lock()
		s.indexes[name] = true
		s.mu.Unlock()
	}
	return nil
}

// DropInstance removes every record, claim and declared type of an
// instance, its change feed, and its usage and counters.
func (s *Store) DropInstance(ctx context.Context, inst string) error {
	if err := checkName("instance", inst); err != nil {
		return err
	}
	for _, c := range []*mongo.Collection{s.records, s.uniques, s.types} {
		if err := s.deleteAll(ctx, c, bson.D{{Key: fInst, Value: inst}}); err != nil {
			return s.fail(ctx, "dropping instance", err)
		}
	}
	if err := s.dropChanges(ctx, inst); err != nil {
		return err
	}
	// The usage last: a write that lands meanwhile counts from nothing
	// again, as its records do.
	octx, cancel := s.op(ctx)
	defer cancel()
	if err := s.dropUsageQueue(octx, inst); err != nil {
		return s.fail(ctx, "dropping instance", err)
	}
	if _, err := s.usage.DeleteOne(octx, bson.D{{Key: "_id", Value: inst}}); err != nil {
		return s.fail(ctx, "dropping instance", err)
	}
	s.mu.Lock()
	delete(s.declared, inst)
	delete(s.counted, inst)
	s.mu.Unlock()
	return nil
}

// dropBatch is how many documents one step of deleteAll removes.
const dropBatch = 5000

// deleteAll deletes the documents of c that filter matches, dropBatch at
// a time, each step (a find of their _ids, a deleteMany of those) one
// operation within Config.OpTimeout: one deleteMany of a large
// instance's million records would outlast it and fail half way.
func (s *Store) deleteAll(ctx context.Context, c *mongo.Collection, filter bson.D) error {
	for {
		n, err := s.deleteSome(ctx, c, filter)
		if err != nil || n < dropBatch {
			return err
		}
	}
}

// deleteSome is one step of deleteAll: how many it deleted.
func (s *Store) deleteSome(ctx context.Context, c *mongo.Collection, filter bson.D) (int, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	cur, err := c.Find(octx, filter, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}).SetLimit(dropBatch))
	if err != nil {
		return 0, err
	}
	var ids bson.A
	for cur.Next(octx) {
		ids = append(ids, cur.Current.Lookup("_id"))
	}
	err = cur.Err()
	_ = cur.Close(context.WithoutCancel(octx))
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	_, err = c.DeleteMany(octx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
	return len(ids), err
}
