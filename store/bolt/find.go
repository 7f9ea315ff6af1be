package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// Find returns the records a query selects, in the query's order. Reference
// hops in the filter are resolved first (store.ResolveHops, bounded by
// Config.HopLimit); the rest runs in one read transaction, planned as
// described in plan.go.
func (s *Store) Find(ctx context.Context, inst string, q *store.Query) ([]*store.Record, error) {
	recs, _, err := s.find(ctx, inst, q)
	return recs, err
}

// find is Find that also reports the plan it ran (for tests).
func (s *Store) find(ctx context.Context, inst string, q *store.Query) ([]*store.Record, planInfo, error) {
	var info planInfo
	if err := ctx.Err(); err != nil {
		return nil, info, err
	}
	if q == nil || q.Type == "" {
		return nil, info, errors.New("bolt: query without a type")
	}
	if q.Skip < 0 || q.Limit < 0 {
		return nil, info, errors.New("bolt: negative skip or limit")
	}
	gen := s.ids.gen.Load() // before the hops: they read too
	filter, err := store.ResolveHops(ctx, s, inst, q.Filter, s.cfg.HopLimit)
	if err != nil {
		return nil, info, err
	}
	key, cacheable := s.ids.key(inst, q, filter)
	if cacheable {
		if recs, ok := s.ids.get(key, q.Type, gen); ok {
			info.Cached = true
			return recs, info, nil
		}
	}
	var out []*store.Record
	err = s.run(ctx, inst, q, filter, &info, func(e *exec) error {
		var err error
		if out, err = e.run(); err != nil {
			return err
		}
		return e.complete(out)
	})
	if err != nil {
		return nil, info, err
	}
	if out == nil {
		out = []*store.Record{}
	}
	if cacheable {
		s.ids.put(key, gen, out)
	}
	return out, info, nil
}

// run prepares the exec of a query with its hops resolved (filter) in a
// read transaction and hands it to f, unless the type has no records.
func (s *Store) run(ctx context.Context, inst string, q *store.Query, filter arcql.Expr, info *planInfo, f func(e *exec) error) error {
	return s.view(func(tx *bbolt.Tx) error {
		ib := instBucket(tx, inst)
		st, err := s.stateIn(ib, inst)
		if err != nil {
			return err
		}
		e := &exec{
			ctx:    ctx,
			inst:   inst,
			hints:  &s.hints,
			q:      q,
			filter: filter,
			ib:     ib,
			rb:     recBucket(ib, q.Type),
			ts:     st.types[q.Type],
			info:   info,
		}
		if err := e.prepare(); err != nil {
			return err
		}
		if e.rb == nil {
			return nil
		}
		return f(e)
	})
}

// exec runs one query in a read transaction.
type exec struct {
	ctx    context.Context
	inst   string
	hints  *planHints
	q      *store.Query
	filter arcql.Expr
	ib, rb *bbolt.Bucket
	ts     *typeState
	info   *planInfo

	after, before *store.Record // the cursor records
	// backward: the sources run from the end of the query's order.
	backward bool
	// sort is the query's sort without its redundant keys: nothing after a
	// core.id key (ids are unique), and nothing at all when that is the
	// first key, which is then the id order itself (idDesc when descending).
	sort    []arcql.SortKey
	idDesc  bool
	skipped int
	out     []*store.Record
	steps   int
	names   names
	// only are the fields the filter and the sort read. When probing, the
	// records a query tests are decoded with these fields only, and those
	// it returns are decoded in full at the end (complete): a scan that
	// tests many records to return a page, or a caller that wants ids
	// only, then decodes little. Plans on an index, whose records mostly
	// make the page, decode in full at once.
	only    []string
	probing bool
	// whole: the records returned are decoded in full already.
	whole bool
	slab  []store.Record // see bare
	// visit, when set, takes every record the query selects instead of
	// the page (Aggregate): records stream through it, none is kept.
	visit func(*store.Record) error
}

// decode decodes a record of the query's type: in full, or when probing
// the fields the query reads.
func (e *exec) decode(id string, v []byte) (*store.Record, error) {
	if e.probing {
		return decodeFields(e.q.Type, id, v, nil, e.only)
	}
	return e.decodeFull(id, v)
}

// bare returns a record of the query's type with only an id, from a slab
// allocated once for the records an IDsOnly query returns.
func (e *exec) bare(id string) *store.Record {
	if len(e.slab) == cap(e.slab) {
		n := 64
		if e.q.Limit > 0 {
			n = min(e.q.Limit, 1024)
		}
		e.slab = make([]store.Record, 0, n)
	}
	e.slab = append(e.slab, store.Record{Type: e.q.Type, ID: id})
	return &e.slab[len(e.slab)-1]
}

// complete decodes in full the records a query returns when they were
// probed. With IDsOnly, ids are all a caller wants and the records stay as
// they are.
func (e *exec) complete(out []*store.Record) error {
	if !e.probing || e.q.IDsOnly || e.whole {
		return nil
	}
	for i, r := range out {
		full, err := e.decodeFull(r.ID, e.rb.Get([]byte(r.ID)))
		if err != nil {
			return err
		}
		out[i] = full
	}
	return nil
}

// decodeFull decodes a record of the query's type in full, interning its
// field names.
func (e *exec) decodeFull(id string, v []byte) (*store.Record, error) {
	if e.names == nil {
		e.names = names{}
	}
	return decodeRecordNames(e.q.Type, id, v, e.names)
}

// prepare reads the query's direction and order, and loads the After and
// Before records, which must exist and match.
func (e *exec) prepare() error {
	e.only = []string{}
	arcql.Fields(e.filter, e.q.Sort, func(name string) {
		if !slices.Contains(e.only, name) {
			e.only = append(e.only, name)
		}
	})
	e.backward = e.q.Backward
	e.sort = e.q.Sort
	for i, k := range e.q.Sort {
		if pathName(k.Path) != "core.id" {
			continue
		}
		if i == 0 {
			e.sort, e.idDesc = nil, k.Desc
		} else {
			e.sort = e.q.Sort[:i+1]
		}
		break
	}
	var err error
	if e.q.After != "" {
		if e.after, err = e.cursor(e.q.After); err != nil {
			return err
		}
	}
	if e.q.Before != "" {
		if e.before, err = e.cursor(e.q.Before); err != nil {
			return err
		}
	}
	return nil
}

func (e *exec) cursor(id string) (*store.Record, error) {
	if e.rb != nil {
		if v := e.rb.Get([]byte(id)); v != nil {
			r, err := e.decode(id, v)
			if err != nil {
				return nil, err
			}
			if e.selects(r) {
				return r, nil
			}
		}
	}
	return nil, fmt.Errorf("bolt: cursor %s %s: %w", e.q.Type, id, store.ErrNotFound)
}

// selects reports whether the query selects r, cursors aside.
func (e *exec) selects(r *store.Record) bool {
	if r.Trashed != nil && !e.q.IncludeTrashed {
		return false
	}
	return arcql.Match(e.filter, r)
}

func (e *exec) run() ([]*store.Record, error) {
	if isNever(e.filter) {
		e.info.Kind = planNone
		return nil, nil
	}
	p, err := e.choosePlan()
	if err != nil {
		return nil, err
	}
	e.info.Kind = p.kind
	e.probing = e.q.IDsOnly || e.visit != nil || p.kind == planScan || p.kind == planScanSort
	if p.cand != nil {
		e.info.Index = p.cand.index.Name
	} else if p.sortIndex != nil {
		e.info.Index = p.sortIndex.Name
	}
	switch p.kind {
	case planIDs, planCollect:
		if len(e.sort) == 0 {
			err = e.fromIDs(p.ids)
		} else {
			err = e.sorted(func(visit func(*store.Record) error) error { return e.loadIDs(p.ids, visit) })
		}
	case planEqStream:
		err = e.eqStream(p.cand)
	case planMerge:
		err = e.merge(p.merge)
	case planSortScan:
		err = e.sortScan(p)
	case planScan:
		err = e.scan()
	default: // planScanSort
		err = e.sorted(e.scanAll)
	}
	return e.out, err
}

// errDone stops a source once the window is full or past its far cursor.
var errDone = errors.New("done")

// offer passes one record, produced in the order the sources run in (the
// query's order, or its reverse when backward), through the filter, the
// cursors, Skip and Limit. It returns errDone when nothing more can enter.
func (e *exec) offer(r *store.Record) error {
	e.steps++
	if e.steps%256 == 0 {
		if err := e.ctx.Err(); err != nil {
			return err
		}
	}
	if !e.selects(r) {
		return nil
	}
	near, far := e.after, e.before
	if e.backward {
		near, far = far, near
	}
	if near != nil {
		c := arcql.CompareSort(e.q.Sort, r, near)
		if (!e.backward && c <= 0) || (e.backward && c >= 0) {
			return nil // not yet past the near cursor
		}
	}
	if far != nil {
		c := arcql.CompareSort(e.q.Sort, r, far)
		if (!e.backward && c >= 0) || (e.backward && c <= 0) {
			return errDone // at or past the far cursor: so is all that follows
		}
	}
	if e.visit != nil {
		return e.visit(r)
	}
	if e.skipped < e.q.Skip {
		e.skipped++
		return nil
	}
	e.out = append(e.out, r)
	if e.q.Limit > 0 && len(e.out) >= e.q.Limit {
		return errDone
	}
	return nil
}

// finish ends a source: errDone is success, and a backward run is put back
// into the query's order.
func (e *exec) finish(err error) error {
	if err != nil && err != errDone {
		return err
	}
	if e.backward {
		slices.Reverse(e.out)
	}
	return nil
}

func (e *exec) load(id []byte) (*store.Record, error) {
	v := e.rb.Get(id)
	if v == nil {
		return nil, nil
	}
	e.info.Loaded++
	return e.decode(string(id), v)
}

// loadIDs visits the records of ids that exist, in the order given.
func (e *exec) loadIDs(ids [][]byte, visit func(*store.Record) error) error {
	for _, id := range ids {
		r, err := e.load(id)
		if err != nil {
			return err
		}
		if r == nil {
			continue
		}
		if err := visit(r); err != nil {
			return err
		}
	}
	return nil
}

// walkDown reports whether an id-ordered source walks ids downwards: a
// backward query in ascending id order, or a forward one in descending.
func (e *exec) walkDown() bool { return e.backward != e.idDesc }

// near is the cursor a source starts from: After, or Before when backward.
func (e *exec) near() *store.Record {
	if e.backward {
		return e.before
	}
	return e.after
}

// fromIDs offers the records of sorted ids in id order (no SORT).
func (e *exec) fromIDs(ids [][]byte) error {
	if e.walkDown() {
		ids = slices.Clone(ids)
		slices.Reverse(ids)
	}
	return e.finish(e.loadIDs(ids, e.offer))
}

// scan offers the type's records in id order (no SORT), starting at the
// near cursor.
func (e *exec) scan() error {
	c := e.rb.Cursor()
	down, near := e.walkDown(), e.near()
	var k, v []byte
	switch {
	case !down && near != nil:
		k, v = c.Seek([]byte(near.ID))
	case !down:
		k, v = c.First()
	case near != nil:
		if k, _ = c.Seek([]byte(near.ID)); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	default:
		k, v = c.Last()
	}
	var spare *store.Record // a probe the last offer dropped
	e.whole = true          // the records scan keeps it decodes in full at once
	for k != nil {
		e.info.Loaded++
		var r *store.Record
		var err error
		if e.probing {
			if spare == nil {
				spare = &store.Record{Type: e.q.Type}
			}
			// The probe's id is the key's bytes, valid during the
			// transaction; a probe kept gets a copy below.
			r, spare.ID = spare, unsafe.String(unsafe.SliceData(k), len(k))
			err = decodeInto(r, v, nil, e.only)
		} else {
			r, err = e.decode(string(k), v)
		}
		if err != nil {
			return err
		}
		n := len(e.out)
		err = e.offer(r)
		if len(e.out) > n && e.probing { // kept (also when the window just filled)
			id := strings.Clone(r.ID)
			if e.q.IDsOnly {
				e.out[n] = e.bare(id) // and the probe serves again
			} else {
				full, derr := e.decodeFull(id, v)
				if derr != nil {
					return derr
				}
				e.out[n] = full // and the probe serves again
			}
		}
		if err != nil {
			return e.finish(err)
		}
		if down {
			k, v = c.Prev()
		} else {
			k, v = c.Next()
		}
	}
	return e.finish(nil)
}

// scanAll visits every record of the type.
func (e *exec) scanAll(visit func(*store.Record) error) error {
	c := e.rb.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		e.info.Loaded++
		r, err := e.decode(string(k), v)
		if err != nil {
			return err
		}
		if err := visit(r); err != nil {
			return err
		}
	}
	return nil
}

// sorted gathers the selected records of a source, sorts them by the
// query's order and offers them.
func (e *exec) sorted(source func(visit func(*store.Record) error) error) error {
	var recs []*store.Record
	n := 0
	err := source(func(r *store.Record) error {
		n++
		if n%256 == 0 {
			if err := e.ctx.Err(); err != nil {
				return err
			}
		}
		if e.selects(r) {
			recs = append(recs, r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(recs, func(a, b *store.Record) int { return arcql.CompareSort(e.q.Sort, a, b) })
	if e.backward {
		slices.Reverse(recs)
	}
	for _, r := range recs {
		if err := e.offer(r); err != nil {
			return e.finish(err)
		}
	}
	return e.finish(nil)
}

// eqStream offers the records of a full-coverage equality in id order,
// from the index entries that start with the value's prefix.
func (e *exec) eqStream(cd *candidate) error {
	p := cd.prefixes[0]
	nf := len(cd.index.Fields)
	c := cd.bucket.Cursor()
	down, near := e.walkDown(), e.near()
	var k []byte
	switch {
	case !down && near != nil:
		k, _ = c.Seek(appendEscaped(bytes.Clone(p), near.ID))
	case !down:
		k, _ = c.Seek(p)
	default:
		end := prefixEnd(p)
		if near != nil {
			end = appendEscaped(bytes.Clone(p), near.ID)
		}
		if k = seekBefore(c, end); k == nil {
			return e.finish(nil)
		}
	}
	for ; k != nil && bytes.HasPrefix(k, p); k = step(c, down) {
		e.info.Keys++
		id, ok := entryID(k, nf)
		if !ok {
			return errCorruptKey(e.q.Type, cd.index)
		}
		r, err := e.load(id)
		if err != nil {
			return err
		}
		if r == nil {
			continue
		}
		if err := e.offer(r); err != nil {
			return e.finish(err)
		}
	}
	return e.finish(nil)
}

// sortScan offers records in the order of the first sort key by walking its
// index: forward for ascending, backward for descending (reversed again for
// a backward query). Entries with equal values form a group whose records
// are sorted by the whole query order (the remaining keys and the id)
// before they are offered.
func (e *exec) sortScan(p *plan) error {
	desc := e.sort[0].Desc
	reverse := desc != e.backward // walk the index from its end
	field := p.sortIndex.Fields[0]
	lo, hi := []byte(nil), []byte(nil)
	if p.sortRange != nil {
		lo, hi = p.sortRange.lo, p.sortRange.hi
	}
	// Start at the near cursor's group.
	if near := e.near(); near != nil {
		leaves, _ := fieldLeaves(near, field)
		v := leaves[0]
		if !reverse && bytes.Compare(v, lo) > 0 {
			lo = v
		}
		if end := prefixEnd(v); reverse && (hi == nil || bytes.Compare(end, hi) < 0) {
			hi = end
		}
	}
	c := p.sortBucket.Cursor()
	var k []byte
	if reverse {
		if hi == nil {
			k, _ = c.Last()
		} else {
			k = seekBefore(c, hi)
		}
	} else {
		if len(lo) == 0 {
			lo = []byte{kNull} // skip the flags key
		}
		k, _ = c.Seek(lo)
	}
	inRange := func(k []byte) bool {
		if k == nil || k[0] == metaKey[0] {
			return false
		}
		if reverse {
			return lo == nil || bytes.Compare(k, lo) >= 0
		}
		return hi == nil || bytes.Compare(k, hi) < 0
	}

	var group []*store.Record
	var groupVal []byte
	flush := func() error {
		slices.SortFunc(group, func(a, b *store.Record) int { return arcql.CompareSort(e.q.Sort, a, b) })
		if e.backward {
			slices.Reverse(group)
		}
		for _, r := range group {
			if err := e.offer(r); err != nil {
				return err
			}
		}
		group = group[:0]
		return nil
	}
	for ; inRange(k); k = step(c, reverse) {
		e.info.Keys++
		val, ok1 := valuePart(k, 1)
		id, ok2 := entryID(k, 1)
		if !ok1 || !ok2 {
			return errCorruptKey(e.q.Type, p.sortIndex)
		}
		if groupVal != nil && !bytes.Equal(val, groupVal) {
			if err := flush(); err != nil {
				return e.finish(err)
			}
		}
		groupVal = append(groupVal[:0], val...)
		r, err := e.load(id)
		if err != nil {
			return err
		}
		if r != nil && e.selects(r) {
			group = append(group, r)
		}
	}
	if err := flush(); err != nil {
		return e.finish(err)
	}
	return e.finish(nil)
}

// isNever reports the filter that matches nothing (arcql.Never), which
// Bind produces for a condition that cannot hold.
func isNever(e arcql.Expr) bool {
	n, ok := e.(*arcql.Not)
	if !ok {
		return false
	}
	_, all := n.X.(*arcql.All)
	return all
}

// seekBefore positions c on the last key below end.
func seekBefore(c *bbolt.Cursor, end []byte) []byte {
	k, _ := c.Seek(end)
	if k == nil {
		k, _ = c.Last()
		return k
	}
	k, _ = c.Prev()
	return k
}

func step(c *bbolt.Cursor, backward bool) []byte {
	var k []byte
	if backward {
		k, _ = c.Prev()
	} else {
		k, _ = c.Next()
	}
	return k
}

func errCorruptKey(typ string, x *indexDef) error {
	return fmt.Errorf("bolt: index %s.%s: corrupt key", typ, x.Name)
}

// sortUnique sorts ids and drops duplicates, in place.
func sortUnique(ids [][]byte) [][]byte {
	slices.SortFunc(ids, bytes.Compare)
	return slices.CompactFunc(ids, bytes.Equal)
}
