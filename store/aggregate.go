package store

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/corehq/core/store/arcql"
)

// AggQuery asks for aggregates over the records of a type that a filter
// selects, optionally grouped.
type AggQuery struct {
	Type string
	// Filter is a bound arcql expression (reference hops allowed); nil
	// selects every record.
	Filter arcql.Expr
	// IncludeTrashed counts trashed records too.
	IncludeTrashed bool
	// Fields are the field aggregates to compute; Count of the records is
	// always computed.
	Fields []AggField
	// GroupBy are the group keys; none makes one group of every record
	// (returned even when it is empty).
	GroupBy []GroupKey
	// Having is a filter over a group's aggregates (see Group.Value);
	// nil keeps every group.
	Having arcql.Expr
	// After keeps only the groups after the one with these key values, in
	// the order of GroupBy; First keeps at most this many (0: all).
	After []any
	First int
	// Ints names the fields whose numbers are integers (declared Int): a
	// store that reads values from an index, where numbers are float64,
	// gives those back as int64, as the records hold them.
	Ints []string
	// MaxGroups, MaxDistinct and MaxBytes bound one aggregation: the
	// groups it holds, the distinct values it holds over all groups, and
	// the bytes its groups and values hold, as the accumulator estimates
	// them (0: DefaultMaxGroups, DefaultMaxDistinct, DefaultMaxBytes).
	// Each is checked as a group or a value is added, before it is kept:
	// past one, Add fails with a *BoundError and holds no more.
	MaxGroups, MaxDistinct int
	MaxBytes               int64
	// Shared, when set, is the memory all the process's aggregations may
	// hold at once; an aggregation takes its bytes from it as it grows
	// and gives them back when its accumulator is released. Past it, Add
	// fails with ErrAggregateMemory.
	Shared *AggMemory
}

// The default bounds of one aggregation. A group of a count and one
// field's aggregates holds about 560 bytes (BenchmarkAccumulator), a
// distinct value a map entry, its value and its text (more in a group's
// first values: a map's first slots): the byte bound, not the count of
// groups, is what stops groups of several aggregated fields or of
// distinct values. 32 MiB of groups is about 100 MiB of heap at the
// collector's target (cored's GOGC 200), still under the audit's 200 MB.
const (
	DefaultMaxGroups         = 100_000
	DefaultMaxDistinct       = 500_000
	DefaultMaxBytes    int64 = 32 << 20
)

// GroupBound is the most groups q may hold (MaxGroups or its default).
func (q *AggQuery) GroupBound() int {
	if q.MaxGroups > 0 {
		return q.MaxGroups
	}
	return DefaultMaxGroups
}

// BoundError: an aggregation would hold more groups or distinct values
// than its bounds allow. The message is for the client.
type BoundError struct{ Msg string }

func (e *BoundError) Error() string { return e.Msg }

// ErrAggregateMemory: the aggregations running at once hold the memory
// the process allows them all (AggMemory); the aggregation was stopped
// and may be tried again when they end.
var ErrAggregateMemory = errors.New("store: aggregations hold the memory the server allows them")

// AggMemory is the memory the aggregations of a process may hold at once,
// in the bytes their accumulators estimate. Safe for concurrent use.
type AggMemory struct {
	max  int64
	used atomic.Int64
}

// NewAggMemory returns a budget of max bytes over all aggregations.
func NewAggMemory(max int64) *AggMemory { return &AggMemory{max: max} }

// Max is the budget's size in bytes.
func (m *AggMemory) Max() int64 { return m.max }

// Used is what the aggregations running now hold of it.
func (m *AggMemory) Used() int64 { return m.used.Load() }

// take reserves n bytes, or none when they would pass the budget.
func (m *AggMemory) take(n int64) bool {
	if m.used.Add(n) > m.max {
		m.used.Add(-n)
		return false
	}
	return true
}

// AggField asks for the aggregates of one scalar field (or core.created,
// core.updated): count, sum, avg, min and max always (cheap); Distinct
// also the distinct count, sum and avg (a set of the field's values per
// group).
type AggField struct {
	Field    string
	Distinct bool
}

// GroupKey is one group key: a field (or "core.created", "core.updated")
// and its order. Unit buckets a time value in UTC; the key is then its
// text (TruncateTime).
type GroupKey struct {
	Field string
	Desc  bool
	Unit  TimeUnit
}

// TimeUnit is the granularity of a time group key.
type TimeUnit string

// The time units of GroupKey.Unit; "" keeps the value as it is.
const (
	Seconds TimeUnit = "SECONDS"
	Minutes TimeUnit = "MINUTES"
	Hours   TimeUnit = "HOURS"
	Days    TimeUnit = "DAYS"
	Months  TimeUnit = "MONTHS"
	Years   TimeUnit = "YEARS"
)

// unitLayouts are the texts of the time units, in UTC.
var unitLayouts = map[TimeUnit]string{
	Seconds: "2006-01-02 15:04:05",
	Minutes: "2006-01-02 15:04",
	Hours:   "2006-01-02 15",
	Days:    "2006-01-02",
	Months:  "2006-01",
	Years:   "2006",
}

// TruncateTime is the text of the bucket of unit that t falls in.
func TruncateTime(t time.Time, unit TimeUnit) string {
	return t.UTC().Format(unitLayouts[unit])
}

// bucket is the bucket of a time value: a time.Time, or a DateTime
// field's value, which is stored as its RFC 3339 text. Other values are
// their own bucket.
func bucket(v any, unit TimeUnit) any {
	switch x := v.(type) {
	case time.Time:
		return TruncateTime(x, unit)
	case string:
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return TruncateTime(t, unit)
		}
	}
	return v
}

// ValidUnit reports whether unit is one of the time units.
func ValidUnit(unit TimeUnit) bool { _, ok := unitLayouts[unit]; return ok }

// Group is the aggregates of one group.
type Group struct {
	// Keys are the group's key values, in the order of GroupBy (nil for a
	// record without the field; a bucketed time is its text).
	Keys  []any
	Count int
	// Fields are the field aggregates, by field name.
	Fields map[string]*FieldAggs
}

// FieldAggs are the aggregates of one field in one group. Sum and Min/Max
// keep the kind of the values (int64 when every value was an integer,
// else float64; times and strings for Min/Max); nil when there were no
// values (Sum: no numbers).
type FieldAggs struct {
	Count       int
	Sum, Avg    any
	Min, Max    any
	Distinct    bool // the Distinct ones are set
	CountDist   int
	SumDist     any
	AvgDist     any
	sum         float64
	isum        int64
	ints, nums  int
	intOverflow bool
	values      map[string]any // distinct values by canonical text
}

// ErrAggregate wraps a query the store cannot aggregate (an unknown unit).
var ErrAggregate = errors.New("store: bad aggregate query")

// Check reports whether a query is well formed.
func (q *AggQuery) Check() error {
	if q.Type == "" {
		return fmt.Errorf("%w: no type", ErrAggregate)
	}
	for _, k := range q.GroupBy {
		if k.Unit != "" && !ValidUnit(k.Unit) {
			return fmt.Errorf("%w: unknown time unit %q", ErrAggregate, k.Unit)
		}
	}
	if len(q.After) > 0 && len(q.After) != len(q.GroupBy) {
		return fmt.Errorf("%w: the cursor has %d keys, the query groups by %d", ErrAggregate, len(q.After), len(q.GroupBy))
	}
	return nil
}

// ReadFields lists the record fields a query reads (for stores that decode
// only some): the aggregated fields and the group keys.
func (q *AggQuery) ReadFields() []string {
	var out []string
	add := func(f string) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	for _, f := range q.Fields {
		add(f.Field)
	}
	for _, k := range q.GroupBy {
		add(k.Field)
	}
	return out
}

// Accumulator computes an AggQuery's groups from the records a store
// streams to it, in one pass: it holds one Group per distinct key (and the
// distinct values asked for), never the records. Every group and distinct
// value is counted against the query's bounds before it is kept, so an
// aggregation past them stops at the bound, not after building what
// passes it. Not safe for concurrent use.
type Accumulator struct {
	q                      *AggQuery
	groups                 map[string]*Group
	key                    strings.Builder
	keys                   []any
	maxGroups, maxDistinct int
	maxBytes               int64
	distinct               int   // distinct values held, over all groups
	bytes                  int64 // estimated bytes held by groups and values
	reserved               int64 // bytes taken from q.Shared
}

// NewAccumulator returns an empty accumulator for q. The caller calls
// Groups, or Release when it stops early, so that the bytes taken from
// q.Shared are given back.
func NewAccumulator(q *AggQuery) *Accumulator {
	a := &Accumulator{q: q, groups: map[string]*Group{}, keys: make([]any, len(q.GroupBy)),
		maxGroups: q.GroupBound(), maxDistinct: q.MaxDistinct, maxBytes: q.MaxBytes}
	if a.maxDistinct <= 0 {
		a.maxDistinct = DefaultMaxDistinct
	}
	if a.maxBytes <= 0 {
		a.maxBytes = DefaultMaxBytes
	}
	return a
}

// The accumulator's estimates of what it holds, fitted to the heap that
// groups of each shape held (TestAccumulatorMemory; Go 1.26, amd64): a
// group with its entry in the groups map, its key values and its map of
// field aggregates; each field's aggregates; a distinct value's map entry
// (beside its text, counted twice: the canonical text and the value); and
// the first slots of a group's map of distinct values.
const (
	groupBytes       = 200
	fieldBytes       = 380
	distinctBytes    = 80
	distinctMapBytes = 140
)

// reserveChunk is how much of q.Shared an accumulator takes at a time.
const reserveChunk = 256 << 10

// grow counts n more bytes held, failing when they pass the query's
// bound or the shared budget.
func (a *Accumulator) grow(n int64) error {
	if a.bytes+n > a.maxBytes {
		return &BoundError{fmt.Sprintf("aggregate: its groups and distinct values would hold more than %s; narrow where, group by fewer or coarser keys, or leave out distinct", sizeText(a.maxBytes))}
	}
	a.bytes += n
	for a.q.Shared != nil && a.bytes > a.reserved {
		if !a.q.Shared.take(reserveChunk) {
			return fmt.Errorf("%w (%s at once)", ErrAggregateMemory, sizeText(a.q.Shared.max))
		}
		a.reserved += reserveChunk
	}
	return nil
}

// sizeText is n bytes as a bound's message names them.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Release gives back what the accumulator took of q.Shared and drops its
// groups; the accumulator takes no more records. Calling it again does
// nothing.
func (a *Accumulator) Release() {
	if a.q.Shared != nil && a.reserved > 0 {
		a.q.Shared.used.Add(-a.reserved)
	}
	a.reserved = 0
	a.groups = nil
}

// Add counts one record; the caller has applied the filter and the trash
// rule. It fails with a *BoundError (or ErrAggregateMemory), and the
// caller stops, when the record would make one group, distinct value or
// byte more than the bounds; what would pass them is not kept.
func (a *Accumulator) Add(r *Record) error {
	for i, k := range a.q.GroupBy {
		v := recordValue(r, k.Field)
		if k.Unit != "" {
			v = bucket(v, k.Unit)
		}
		a.keys[i] = v
	}
	g, err := a.group(a.keys)
	if err != nil {
		return err
	}
	g.Count++
	for _, f := range a.q.Fields {
		fa := g.Fields[f.Field]
		v := recordValue(r, f.Field)
		if v != nil && fa.Distinct {
			if err := a.addDistinct(fa, v); err != nil {
				return err
			}
		}
		fa.add(v)
	}
	return nil
}

// addDistinct keeps v among fa's distinct values, within the bounds.
func (a *Accumulator) addDistinct(fa *FieldAggs, v any) error {
	a.key.Reset()
	canonical(&a.key, v)
	if _, ok := fa.values[a.key.String()]; ok {
		return nil
	}
	if a.distinct >= a.maxDistinct {
		return &BoundError{fmt.Sprintf("aggregate: more than %d distinct values; narrow where, or leave out distinct", a.maxDistinct)}
	}
	n := distinctBytes + 2*int64(a.key.Len())
	if fa.values == nil {
		n += distinctMapBytes
	}
	if err := a.grow(n); err != nil {
		return err
	}
	if fa.values == nil {
		fa.values = map[string]any{}
	}
	fa.values[a.key.String()] = v
	a.distinct++
	return nil
}

// AddCount adds n records whose group key values are keys (in the order
// of GroupBy, units applied), for a store that counted them itself: the
// query must ask for no field aggregates.
func (a *Accumulator) AddCount(keys []any, n int) error {
	if len(keys) != len(a.q.GroupBy) || len(a.q.Fields) > 0 {
		return fmt.Errorf("%w: AddCount with %d keys for %d group keys and %d fields", ErrAggregate, len(keys), len(a.q.GroupBy), len(a.q.Fields))
	}
	g, err := a.group(keys)
	if err != nil {
		return err
	}
	g.Count += n
	return nil
}

// group returns the group of the key values, made (within the bounds on
// groups and bytes) when it is new.
func (a *Accumulator) group(keys []any) (*Group, error) {
	if a.groups == nil {
		return nil, fmt.Errorf("%w: the accumulator was released", ErrAggregate)
	}
	a.key.Reset()
	for _, v := range keys {
		canonical(&a.key, v)
		a.key.WriteByte(0)
	}
	if g := a.groups[a.key.String()]; g != nil {
		return g, nil
	}
	if len(a.groups) >= a.maxGroups {
		return nil, &BoundError{fmt.Sprintf("aggregate: more than %d groups; narrow where, or group by fewer or coarser keys", a.maxGroups)}
	}
	// The key's text is held twice: the map's key, and the key values
	// (strings share the record's text, which the group now keeps).
	if err := a.grow(groupBytes + 2*int64(a.key.Len()) + fieldBytes*int64(len(a.q.Fields))); err != nil {
		return nil, err
	}
	g := &Group{Keys: slices.Clone(keys), Fields: make(map[string]*FieldAggs, len(a.q.Fields))}
	for _, f := range a.q.Fields {
		g.Fields[f.Field] = &FieldAggs{Distinct: f.Distinct}
	}
	a.groups[a.key.String()] = g
	return g, nil
}

// recordValue is a field's value, or core.created / core.updated.
func recordValue(r *Record, field string) any {
	switch field {
	case "core.created":
		return r.Created
	case "core.updated":
		return r.Updated
	}
	return r.Fields[field]
}

// add counts v in the aggregates other than the distinct ones
// (Accumulator.addDistinct).
func (fa *FieldAggs) add(v any) {
	if v == nil {
		return
	}
	fa.Count++
	if fa.Min == nil || arcql.CompareValues(v, fa.Min) < 0 {
		fa.Min = v
	}
	if fa.Max == nil || arcql.CompareValues(v, fa.Max) > 0 {
		fa.Max = v
	}
	fa.addNumber(v)
}

// addNumber counts v in the sum and the mean when it is a number.
func (fa *FieldAggs) addNumber(v any) {
	switch n := v.(type) {
	case int64:
		fa.addInt(n)
	case int:
		fa.addInt(int64(n))
	case float64:
		fa.sum += n
		fa.nums++
	}
}

func (fa *FieldAggs) addInt(n int64) {
	s := fa.isum + n
	if (n > 0 && s < fa.isum) || (n < 0 && s > fa.isum) {
		fa.intOverflow = true
	}
	fa.isum = s
	fa.sum += float64(n)
	fa.ints++
	fa.nums++
}

// finish computes the sums and averages.
func (fa *FieldAggs) finish() {
	fa.Sum, fa.Avg = sumAvg(fa.nums, fa.ints, fa.isum, fa.sum, fa.intOverflow)
	if !fa.Distinct {
		return
	}
	fa.CountDist = len(fa.values)
	d := &FieldAggs{}
	for _, v := range fa.values {
		d.addNumber(v)
	}
	fa.SumDist, fa.AvgDist = sumAvg(d.nums, d.ints, d.isum, d.sum, d.intOverflow)
	fa.values = nil
}

func sumAvg(nums, ints int, isum int64, sum float64, overflow bool) (any, any) {
	if nums == 0 {
		return nil, nil
	}
	avg := sum / float64(nums)
	if ints == nums && !overflow {
		return isum, avg
	}
	return sum, avg
}

// canonical writes a value so that equal values (3 and 3.0 among them)
// write the same text and different ones different texts.
func canonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteByte('z')
	case bool:
		b.WriteByte('b')
		b.WriteString(strconv.FormatBool(x))
	case int64:
		b.WriteByte('n')
		b.WriteString(strconv.FormatInt(x, 10))
	case int:
		b.WriteByte('n')
		b.WriteString(strconv.Itoa(x))
	case float64:
		b.WriteByte('n')
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			b.WriteString(strconv.FormatInt(int64(x), 10))
		} else {
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
	case string:
		b.WriteByte('s')
		b.WriteString(x)
	case time.Time:
		b.WriteByte('t')
		b.WriteString(x.UTC().Format(time.RFC3339Nano))
	default:
		b.WriteByte('o')
		fmt.Fprint(b, x)
	}
}

// Groups returns the query's groups: finished, kept by Having, ordered by
// the group keys, after After and at most First of them. A query without
// GroupBy has exactly one group, also when no record was added. It
// releases the accumulator (Release): the groups it does not return are
// garbage once it returns.
func (a *Accumulator) Groups() []*Group {
	defer a.Release()
	if a.groups == nil {
		a.groups = map[string]*Group{}
	}
	if len(a.q.GroupBy) == 0 && len(a.groups) == 0 {
		a.key.Reset()
		g := &Group{Keys: []any{}, Fields: map[string]*FieldAggs{}}
		for _, f := range a.q.Fields {
			g.Fields[f.Field] = &FieldAggs{Distinct: f.Distinct}
		}
		a.groups[""] = g
	}
	out := make([]*Group, 0, len(a.groups))
	for _, g := range a.groups {
		for _, fa := range g.Fields {
			fa.finish()
		}
		if a.q.Having != nil && !arcql.Match(a.q.Having, g) {
			continue
		}
		if a.q.After != nil && a.compareKeys(g.Keys, a.q.After) <= 0 {
			continue
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(x, y *Group) int { return a.compareKeys(x.Keys, y.Keys) })
	if a.q.First > 0 && len(out) > a.q.First {
		out = slices.Clone(out[:a.q.First]) // not holding the others
	}
	return out
}

// compareKeys orders group keys by GroupBy (nulls first when ascending).
func (a *Accumulator) compareKeys(x, y []any) int {
	for i, k := range a.q.GroupBy {
		c := arcql.CompareValues(x[i], y[i])
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// Value answers a Having filter's paths: "core.count", and "<field>" as an
// object of its aggregates (count, sum, avg, min, max, and countDistinct,
// sumDistinct, avgDistinct when computed), so that "price.sum" reads
// the sum.
func (g *Group) Value(name string) (any, bool) {
	if name == "core.count" {
		return int64(g.Count), true
	}
	fa, ok := g.Fields[name]
	if !ok {
		return nil, false
	}
	m := map[string]any{"count": int64(fa.Count), "sum": fa.Sum, "avg": fa.Avg, "min": fa.Min, "max": fa.Max}
	if fa.Distinct {
		m["countDistinct"], m["sumDistinct"], m["avgDistinct"] = int64(fa.CountDist), fa.SumDist, fa.AvgDist
	}
	return m, true
}

// AggSchema describes a group's aggregates to arcql.Bind, for Having:
// "core.count" is an Int, and each aggregated field an object whose
// count and countDistinct are Ints, sum, avg, sumDistinct and avgDistinct
// Floats, and min and max of the field's own kind (Kinds).
type AggSchema struct {
	Kinds map[string]arcql.FieldKind
}

// aggPrefix names the object type of a field's aggregates.
const aggPrefix = "aggregates of "

// Field answers arcql.Schema.
func (s AggSchema) Field(typ, name string) (arcql.Field, bool) {
	if field, ok := strings.CutPrefix(typ, aggPrefix); ok {
		switch name {
		case "count", "countDistinct":
			return arcql.Field{Kind: arcql.FieldInt}, true
		case "sum", "avg", "sumDistinct", "avgDistinct":
			return arcql.Field{Kind: arcql.FieldFloat}, true
		case "min", "max":
			return arcql.Field{Kind: s.Kinds[field]}, true
		}
		return arcql.Field{}, false
	}
	if name == "core.count" {
		return arcql.Field{Kind: arcql.FieldInt}, true
	}
	if _, ok := s.Kinds[name]; ok {
		return arcql.Field{Kind: arcql.FieldObject, Target: aggPrefix + name}, true
	}
	return arcql.Field{}, false
}
