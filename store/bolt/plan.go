package bolt

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/corehq/core/store/arcql"
)

// The planner picks how Find reads candidates. Every candidate is checked
// against the whole filter with arcql.Match afterwards, so a plan only has
// to produce a superset of the matching records, in the right order when it
// claims one. The rules, first that applies:
//
//  1. core.id = 'x' or core.id IN ids: read those records directly.
//  2. No SORT, and equality conjuncts cover every field of an index: scan
//     the index entries of that value; they are in id order, so the scan
//     stops at Limit.
//  3. Otherwise, among the index candidates (equality on the leading fields
//     of an index, a reference field IN ids, a comparison or range or
//     prefix on the first field of an index), take the best (more equality
//     fields, then IN, then ranges) and weigh it against the ordered scan
//     that needs no sorting: the type's bucket in id order without SORT, or
//     the index of the first SORT key when it has one usable for order. When
//     there is such a scan and a Limit, the candidate's index entries are
//     counted up to sqrt((Skip+Limit) × records of the type): a candidate
//     set larger than that costs more to read and sort than the ordered
//     scan is expected to read before it has Limit matches, so the ordered
//     scan wins. A range on the sort field itself bounds the sort scan.
//  4. Otherwise the ordered scan (stopping at Limit), or, when the SORT
//     cannot come from an index, every record of the type, sorted.
//
// An index is used only where it is exact enough. Its flags (see
// indexFlags) tell which kinds of value it has ever held: an equality,
// range or prefix is served only when every non-null value of that field
// is of the literal's kind (a timestamp literal also matches ISO-8601
// strings, a prefix also numbers' decimal text; mixed data falls back to
// scanning), and a sort only by a single-field index that is not multikey
// and holds no objects, whose key order is then exactly
// arcql.CompareValues order.

// planKind names a plan, for tests and explain output.
type planKind string

const (
	planIDs      planKind = "ids"        // rule 1
	planEqStream planKind = "index-eq"   // rule 2
	planCollect  planKind = "index-set"  // rule 3: candidate ids from an index
	planSortScan planKind = "index-sort" // ordered by an index
	planScan     planKind = "scan"       // the type's bucket in id order
	planScanSort planKind = "scan-sort"  // every record, sorted in memory
	planMerge    planKind = "merge"      // an OR's index streams merged in id order (merge.go)
	planNone     planKind = "none"       // the filter matches nothing
	// planIndexOnly: an aggregation read from one index's entries alone
	// (aggregate_index.go).
	planIndexOnly planKind = "index-only"
)

// planInfo says how a Find ran: the plan, the index used and the work done.
type planInfo struct {
	Kind   planKind
	Index  string
	Keys   int  // index keys read
	Loaded int  // records decoded
	Cached bool // an IDsOnly answer from the id cache (idcache.go)
}

// conjuncts are the top-level AND terms of a filter, sorted by what an
// index can do with them. The maps are nil until a term goes in them:
// most filters of a read by id fill none.
type conjuncts struct {
	ids    []string // core.id = / IN; nil when none
	hasIDs bool
	eq     map[string]*arcql.Value // field = literal
	in     map[string][]string     // field IN ids (resolved hops)
	ranges map[string][]*keyRange  // comparisons, ranges, prefixes
	ors    []*arcql.Or             // disjunctions (unionPlan)
}

// keyRange is a range of index keys [lo, hi) on the first field of an
// index, and the kind bit the data must be restricted to for it to be
// complete. A nil hi is unbounded.
type keyRange struct {
	lo, hi []byte
	bit    byte
}

func pathName(p arcql.Path) string { return strings.Join(p.Parts, ".") }

// splitConjuncts reads the index-usable terms of a filter.
func splitConjuncts(e arcql.Expr) *conjuncts {
	c := &conjuncts{}
	c.add(e)
	return c
}

func (c *conjuncts) add(e arcql.Expr) {
	switch n := e.(type) {
	case *arcql.And:
		for _, t := range n.Terms {
			c.add(t)
		}
	case *arcql.Or:
		c.ors = append(c.ors, n)
	case *arcql.InIDs:
		if n.Field == "core.id" {
			c.setIDs(n.IDs)
		} else {
			if c.in == nil {
				c.in = map[string][]string{}
			}
			c.in[n.Field] = n.IDs
		}
	case *arcql.Compare:
		name := pathName(n.Path)
		if name == "core.id" {
			if n.Op == arcql.OpEq && n.Value.Kind == arcql.KindString {
				c.setIDs([]string{n.Value.Str})
			}
			return
		}
		switch n.Op {
		case arcql.OpEq:
			if c.eq == nil {
				c.eq = map[string]*arcql.Value{}
			}
			c.eq[name] = &n.Value
		case arcql.OpLt, arcql.OpLe, arcql.OpGt, arcql.OpGe, arcql.OpPrefix:
			if r := compareRange(n); r != nil {
				c.addRange(name, r)
			}
		}
	case *arcql.Range:
		if r := rangeRange(n); r != nil {
			c.addRange(pathName(n.Path), r)
		}
	}
}

func (c *conjuncts) addRange(name string, r *keyRange) {
	if c.ranges == nil {
		c.ranges = map[string][]*keyRange{}
	}
	c.ranges[name] = append(c.ranges[name], r)
}

// setIDs keeps the shortest id list of several core.id conjuncts.
func (c *conjuncts) setIDs(ids []string) {
	if !c.hasIDs || len(ids) < len(c.ids) {
		c.ids, c.hasIDs = ids, true
	}
}

// orderable reports whether a literal kind has an order an index holds.
func orderable(v *arcql.Value) bool {
	switch v.Kind {
	case arcql.KindString, arcql.KindNumber, arcql.KindTime:
		return true
	}
	return false
}

// compareRange is the key range of `f op v`.
func compareRange(n *arcql.Compare) *keyRange {
	v := &n.Value
	if n.Op == arcql.OpPrefix {
		if v.Kind != arcql.KindString {
			return nil
		}
		pre := v.Str
		if len(pre) > maxKeyString {
			pre = pre[:maxKeyString] // keys hold no more of a string
		}
		lo := appendEscapedPrefix([]byte{kString}, pre)
		return &keyRange{lo: lo, hi: prefixEnd(lo), bit: bitString}
	}
	if !orderable(v) {
		return nil
	}
	enc := appendLiteral(nil, v)
	tag := enc[0]
	r := &keyRange{bit: literalBit(v)}
	switch n.Op {
	case arcql.OpGt, arcql.OpGe:
		r.lo, r.hi = lowerBound(enc, v, n.Op == arcql.OpGe), []byte{tag + 1}
	default: // OpLt, OpLe
		r.lo, r.hi = []byte{tag}, upperBound(enc, v, n.Op == arcql.OpLe)
	}
	return r
}

// rangeRange is the key range of `f IN [lo, hi]`, when both bounds are of
// one orderable kind.
func rangeRange(n *arcql.Range) *keyRange {
	if !orderable(&n.Lo) || n.Lo.Kind != n.Hi.Kind {
		return nil
	}
	return &keyRange{
		lo:  lowerBound(appendLiteral(nil, &n.Lo), &n.Lo, n.LoIncl),
		hi:  upperBound(appendLiteral(nil, &n.Hi), &n.Hi, n.HiIncl),
		bit: literalBit(&n.Lo),
	}
}

// exactKey reports whether the key of a literal is shared by no value that
// compares differently with it. An integer beyond 2^53 may share the
// float64 key of a literal it is not equal to, and strings longer than
// maxKeyString share truncated keys; for such literals an exclusive bound
// is read as inclusive (Match decides).
func exactKey(v *arcql.Value) bool {
	switch v.Kind {
	case arcql.KindNumber:
		return math.Abs(v.Num) < 1<<53
	case arcql.KindString:
		return len(v.Str) <= maxKeyString
	}
	return true
}

// lowerBound is the first key of values >= v (incl) or > v.
func lowerBound(enc []byte, v *arcql.Value, incl bool) []byte {
	if incl || !exactKey(v) {
		return enc
	}
	return prefixEnd(enc)
}

// upperBound is the key after the values <= v (incl) or < v.
func upperBound(enc []byte, v *arcql.Value, incl bool) []byte {
	if !incl && exactKey(v) {
		return enc
	}
	return prefixEnd(enc)
}

// intersect narrows ranges on one field into one; ok is false when they
// disagree on the kind (then no record can match them all, but Match will
// say so: the range is simply not used).
func intersect(rs []*keyRange) (*keyRange, bool) {
	out := &keyRange{lo: rs[0].lo, hi: rs[0].hi, bit: rs[0].bit}
	for _, r := range rs[1:] {
		if r.bit != out.bit {
			return nil, false
		}
		if bytes.Compare(r.lo, out.lo) > 0 {
			out.lo = r.lo
		}
		if r.hi != nil && (out.hi == nil || bytes.Compare(r.hi, out.hi) < 0) {
			out.hi = r.hi
		}
	}
	return out, true
}

// candidate is a set of record ids an index can produce.
type candidate struct {
	index  *indexDef
	bucket *bbolt.Bucket
	// One of: prefixes (equality or IN: the entries starting with any of
	// them), or rng (entries within it).
	prefixes [][]byte
	rng      *keyRange
	// full: a single prefix that covers every field of the index, so its
	// entries are in id order.
	full bool
	// rank orders candidates: higher is better.
	rank int
}

// only reports whether an index field's values are restricted to the kind
// bit (nulls aside), so that a scan for that kind sees every match.
func only(fl indexFlags, field int, bit byte) bool {
	return fl.kinds[field]&^bit == 0
}

// plan is the chosen way to produce candidates.
type plan struct {
	kind planKind
	ids  [][]byte   // planIDs, planCollect (filled by collect)
	cand *candidate // planEqStream, planCollect
	// planSortScan: the index of the first sort key and an optional range.
	sortIndex  *indexDef
	sortBucket *bbolt.Bucket
	sortRange  *keyRange
	// planMerge: the terms whose streams merge.
	merge []*mergeTerm
}

// choosePlan applies the rules above.
func (e *exec) choosePlan() (*plan, error) {
	c := splitConjuncts(e.filter)
	if c.hasIDs {
		ids := make([][]byte, len(c.ids))
		for i, id := range c.ids {
			ids[i] = []byte(id)
		}
		return &plan{kind: planIDs, ids: sortUnique(ids)}, nil
	}
	cands := e.candidates(c)
	var best *candidate
	for _, cd := range cands {
		if best == nil || cd.rank > best.rank {
			best = cd
		}
	}
	if best != nil && best.full && len(e.sort) == 0 {
		return &plan{kind: planEqStream, cand: best}, nil
	}

	// The ordered alternative.
	var alt *plan
	if len(e.sort) == 0 {
		alt = &plan{kind: planScan}
	} else if x, b := e.sortIndex(); x != nil {
		alt = &plan{kind: planSortScan, sortIndex: x, sortBucket: b}
		if rs := c.ranges[x.Fields[0]]; len(rs) > 0 {
			if r, ok := intersect(rs); ok && only(readFlags(b, 1), 0, r.bit) {
				alt.sortRange = r
			}
		}
	}

	if best == nil {
		if p, err := e.unionPlan(c, alt); p != nil || err != nil {
			return p, err
		}
		if alt != nil {
			return alt, nil
		}
		return &plan{kind: planScanSort}, nil
	}
	if alt == nil || e.q.Limit == 0 {
		ids, _, err := e.collect(best, -1)
		return &plan{kind: planCollect, cand: best, ids: ids}, err
	}
	if alt.kind == planSortScan && alt.sortRange != nil && best.rng != nil && best.index == alt.sortIndex {
		return alt, nil // the same range, read in order
	}
	key := hintKey(e.inst, e.q.Type, best, e.q.Skip+e.q.Limit)
	now := time.Now()
	if e.hints.overflows(key, now) {
		return alt, nil
	}
	n := recordCount(e.ib, e.q.Type)
	limit := int(math.Sqrt(float64(e.q.Skip+e.q.Limit)*float64(n))) + 1
	ids, complete, err := e.collect(best, limit)
	if err != nil {
		return nil, err
	}
	if complete {
		return &plan{kind: planCollect, cand: best, ids: ids}, nil
	}
	e.hints.overflowed(key, now)
	return alt, nil
}

// unionPlan serves a filter without an index candidate of its own through
// an OR conjunct whose every term has one (an access scope: the caller's
// own records, by the core.createdBy index, OR the records a rule's
// resolved hops name, by a reference index): the union of the terms'
// candidate ids, a superset that Match then narrows. With an ordered
// alternative and a Limit the union is read only while it stays within
// rule 3's bound (sqrt((Skip+Limit) × records)); past it, or when a term
// has no candidate, it returns nil and the caller's plan stands.
func (e *exec) unionPlan(c *conjuncts, alt *plan) (*plan, error) {
	limit := -1
	if alt != nil && e.q.Limit > 0 {
		limit = int(math.Sqrt(float64(e.q.Skip+e.q.Limit)*float64(recordCount(e.ib, e.q.Type)))) + 1
	}
next:
	for _, or := range c.ors {
		terms := e.orTerms(or)
		if terms == nil {
			continue
		}
		if len(e.sort) == 0 && !slices.ContainsFunc(terms, func(t *mergeTerm) bool { return t.cd != nil && !mergeable(t.cd) }) {
			return &plan{kind: planMerge, merge: terms}, nil
		}
		var ids [][]byte
		for _, t := range terms {
			if t.cd == nil {
				ids = append(ids, t.ids...)
			} else {
				left := -1
				if limit >= 0 {
					left = limit - len(ids)
				}
				got, complete, err := e.collect(t.cd, left)
				if err != nil {
					return nil, err
				}
				if !complete {
					continue next
				}
				ids = append(ids, got...)
			}
			if limit >= 0 && len(ids) > limit {
				continue next
			}
		}
		return &plan{kind: planCollect, ids: sortUnique(ids)}, nil
	}
	return nil, nil
}

// orTerms returns each term of or as an id list or its best index
// candidate; nil when some term has neither.
func (e *exec) orTerms(or *arcql.Or) []*mergeTerm {
	terms := make([]*mergeTerm, 0, len(or.Terms))
	for _, t := range or.Terms {
		tc := splitConjuncts(t)
		if tc.hasIDs {
			ids := make([][]byte, len(tc.ids))
			for i, id := range tc.ids {
				ids[i] = []byte(id)
			}
			terms = append(terms, &mergeTerm{ids: ids})
			continue
		}
		var best *candidate
		for _, cd := range e.candidates(tc) {
			if best == nil || cd.rank > best.rank {
				best = cd
			}
		}
		if best == nil {
			return nil
		}
		terms = append(terms, &mergeTerm{cd: best})
	}
	return terms
}

// candidates lists what the type's indexes can do for the conjuncts.
func (e *exec) candidates(c *conjuncts) []*candidate {
	if e.ts == nil {
		return nil
	}
	var out []*candidate
	for _, x := range e.ts.Indexes {
		b := idxBucket(e.ib, e.q.Type, x.Name)
		if b == nil {
			continue
		}
		fl := readFlags(b, len(x.Fields))
		// Equality on leading fields.
		var prefix []byte
		n := 0
		for i, f := range x.Fields {
			v, ok := c.eq[f]
			if !ok || (v.Kind != arcql.KindNull && !only(fl, i, literalBit(v))) {
				break
			}
			prefix = appendLiteral(prefix, v)
			n++
		}
		if n > 0 {
			full := n == len(x.Fields)
			rank := 100 + 10*n
			if full {
				rank += 2
				if x.Unique {
					rank++
				}
			}
			cd := &candidate{index: x, bucket: b, prefixes: [][]byte{prefix}, full: full, rank: rank}
			// A range on the next field narrows the equality prefix.
			if !full {
				if rs := c.ranges[x.Fields[n]]; len(rs) > 0 {
					if r, ok := intersect(rs); ok && only(fl, n, r.bit) {
						hi := prefixEnd(prefix)
						if r.hi != nil {
							hi = append(bytes.Clone(prefix), r.hi...)
						}
						cd.prefixes = nil
						cd.rng = &keyRange{lo: append(bytes.Clone(prefix), r.lo...), hi: hi, bit: r.bit}
						cd.rank += 5
					}
				}
			}
			out = append(out, cd)
			continue
		}
		first := x.Fields[0]
		if ids, ok := c.in[first]; ok && only(fl, 0, bitString) {
			ps := make([][]byte, len(ids))
			for i, id := range ids {
				ps[i] = appendKeyValue(nil, id)
			}
			rank := 50
			if len(x.Fields) == 1 {
				rank++
			}
			out = append(out, &candidate{index: x, bucket: b, prefixes: ps, rank: rank})
			continue
		}
		if rs := c.ranges[first]; len(rs) > 0 {
			if r, ok := intersect(rs); ok && only(fl, 0, r.bit) {
				rank := 10
				if len(x.Fields) == 1 {
					rank++
				}
				out = append(out, &candidate{index: x, bucket: b, rng: r, rank: rank})
			}
		}
	}
	return out
}

// sortIndex returns the index that orders by the first sort key, when one
// gives exactly arcql's order: a single-field index on that path that has
// never held a list or an object.
func (e *exec) sortIndex() (*indexDef, *bbolt.Bucket) {
	if e.ts == nil || len(e.sort) == 0 {
		return nil, nil
	}
	name := pathName(e.sort[0].Path)
	x := e.ts.index(name)
	if x == nil {
		return nil, nil
	}
	b := idxBucket(e.ib, e.q.Type, x.Name)
	if b == nil {
		return nil, nil
	}
	fl := readFlags(b, 1)
	if fl.multikey || fl.kinds[0]&bitOther != 0 {
		return nil, nil
	}
	return x, b
}

// collect reads the record ids of a candidate, stopping (complete false)
// once more than limit index entries were read; limit < 0 reads all. The
// ids come back sorted and without duplicates; they share memory with the
// transaction. With a limit the entries are counted first, so that a
// candidate that loses costs no allocation.
func (e *exec) collect(cd *candidate, limit int) ([][]byte, bool, error) {
	if limit >= 0 {
		n := 0
		err := e.entries(cd, func([]byte) bool { n++; return n <= limit })
		if err != nil || n > limit {
			return nil, false, err
		}
	}
	var ids [][]byte
	nf := len(cd.index.Fields)
	var bad bool
	err := e.entries(cd, func(k []byte) bool {
		id, ok := entryID(k, nf)
		if !ok {
			bad = true
			return false
		}
		ids = append(ids, id)
		return true
	})
	if err != nil {
		return nil, false, err
	}
	if bad {
		return nil, false, errCorruptKey(e.q.Type, cd.index)
	}
	return sortUnique(ids), true, nil
}

// entries visits the index keys of a candidate until visit returns false.
func (e *exec) entries(cd *candidate, visit func(k []byte) bool) error {
	c := cd.bucket.Cursor()
	step := func(k []byte) (bool, error) {
		e.info.Keys++
		if e.info.Keys%256 == 0 {
			if err := e.ctx.Err(); err != nil {
				return false, err
			}
		}
		return visit(k), nil
	}
	if cd.rng != nil {
		for k, _ := c.Seek(cd.rng.lo); k != nil && (cd.rng.hi == nil || bytes.Compare(k, cd.rng.hi) < 0); k, _ = c.Next() {
			if more, err := step(k); !more || err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range cd.prefixes {
		for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
			if more, err := step(k); !more || err != nil {
				return err
			}
		}
	}
	return nil
}
