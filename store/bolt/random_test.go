package bolt

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// TestRandomAgainstModel writes random records with awkward values (ties,
// missing and null values, lists, mixed integer and float numbers, strings
// holding 0x00, Json objects) and runs random queries with random paging,
// comparing every answer with arcql's reference Match and CompareSort over
// a model of what was written. It is the planner's safety net: every plan
// must give exactly the model's answer.
func TestRandomAgainstModel(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	cfg := testConfig()
	cfg.HopLimit = DefaultConfig().HopLimit
	s := openTemp(t, cfg)
	ctx := context.Background()
	const inst = "rand"
	if err := s.Declare(ctx, inst, []store.TypeSpec{randSpec}); err != nil {
		t.Fatal(err)
	}
	m := &model{recs: map[string]*store.Record{}, rnd: rand.New(rand.NewPCG(1, 2))}
	for round := range rounds {
		ops := m.randomOps(round)
		res, err := s.Write(ctx, inst, ops, store.Quota{})
		if errors.Is(err, store.ErrUnique) {
			continue // the model rolled back with it
		}
		if err != nil {
			t.Fatalf("round %d: Write: %v", round, err)
		}
		m.commit()
		last := map[string]int{}
		for i, op := range ops {
			last[op.ID] = i
		}
		for i, r := range res {
			if ops[i].Kind == store.OpUpsert && last[ops[i].ID] == i {
				if d := cmp.Diff(m.recs[ops[i].ID], r.Record); d != "" {
					t.Fatalf("round %d: upsert result differs from the model (-model +store):\n%s", round, d)
				}
			}
		}
		for range 8 {
			q := m.randomQuery()
			want, werr := m.answer(q)
			got, info, err := s.find(ctx, inst, q)
			if werr != nil {
				if !errors.Is(err, werr) {
					t.Fatalf("round %d: %s: err %v, want %v", round, describe(q), err, werr)
				}
				continue
			}
			if err != nil {
				t.Fatalf("round %d: %s: %v", round, describe(q), err)
			}
			if d := cmp.Diff(want, ids(got)); d != "" {
				t.Fatalf("round %d: %s (plan %+v) (-model +store):\n%s", round, describe(q), info, d)
			}
		}
	}
	// Everything reads back as the model holds it.
	for id, want := range m.recs {
		got, err := s.Get(ctx, inst, "R", id)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("record %s (-model +store):\n%s", id, d)
		}
	}
}

var randSpec = store.TypeSpec{
	Name:    "R",
	Unique:  []string{"title"},
	Indices: [][]string{{"price"}, {"cat"}, {"cat", "n"}, {"tags"}, {"meta"}, {"core.created"}},
	Refs:    []string{"ref", "refs"},
}

var randFields = map[string]arcql.Field{
	"n":     {Kind: arcql.FieldInt},
	"price": {Kind: arcql.FieldFloat},
	"cat":   {Kind: arcql.FieldString},
	"title": {Kind: arcql.FieldString},
	"tags":  {Kind: arcql.FieldString, List: true},
	"meta":  {Kind: arcql.FieldJSON},
	"ref":   {Kind: arcql.FieldRef, Target: "R"},
	"refs":  {Kind: arcql.FieldRef, Target: "R", List: true},
}

type randSchema struct{}

func (randSchema) Field(typ, name string) (arcql.Field, bool) {
	if typ != "R" {
		return arcql.Field{}, false
	}
	f, ok := randFields[name]
	return f, ok
}

// model is what the store should hold, with the pending changes of one
// Write kept apart until it succeeds.
type model struct {
	recs, next map[string]*store.Record
	rnd        *rand.Rand
	ids        []string // every id ever used, so queries name missing ones too
	clock      int
}

func (m *model) commit() { m.recs = m.next }

func (m *model) pick(vals ...any) any { return vals[m.rnd.IntN(len(vals))] }

func (m *model) randomID() string {
	if len(m.ids) == 0 || m.rnd.IntN(5) == 0 {
		id := fmt.Sprintf("r%04d", len(m.ids))
		m.ids = append(m.ids, id)
		return id
	}
	return m.ids[m.rnd.IntN(len(m.ids))]
}

func (m *model) randomValue(field string) any {
	switch field {
	case "price":
		return m.pick(nil, int64(2), 2.0, 2.5, -1.0, 0.0, 7.0, 1e15, int64(1)<<60, int64(1)<<60+1, -3.25)
	case "cat":
		return m.pick(nil, "", "a", "b", "c", "a\x00b", "ab", "b\x00")
	case "tags":
		n := m.rnd.IntN(4)
		l := make([]any, n)
		for i := range l {
			l[i] = m.pick("x", "y", "z", "x\x00")
		}
		return l
	case "n":
		return int64(m.rnd.IntN(20))
	case "title":
		return fmt.Sprintf("t%d", m.rnd.IntN(400))
	case "meta":
		return m.pick(nil, "x", "y", int64(3), []any{"x", "z"}, map[string]any{"k": "x"}, true)
	case "ref":
		return m.pick(nil, m.randomID())
	case "refs":
		n := m.rnd.IntN(3)
		l := make([]any, n)
		for i := range l {
			l[i] = m.randomID()
		}
		return l
	}
	return nil
}

// randomOps makes a batch of ops and applies them to m.next.
func (m *model) randomOps(round int) []store.Op {
	m.next = make(map[string]*store.Record, len(m.recs))
	for id, r := range m.recs {
		m.next[id] = copyRecord(r)
	}
	var ops []store.Op
	for range 1 + m.rnd.IntN(4) {
		m.clock++
		now := base.Add(time.Duration(m.clock) * time.Second)
		id := m.randomID()
		op := store.Op{Type: "R", ID: id, Now: now}
		switch k := m.rnd.IntN(20); {
		case k < 12:
			op.Kind = store.OpUpsert
			op.Set = map[string]any{}
			for f := range randFields {
				if m.rnd.IntN(3) == 0 {
					op.Set[f] = m.randomValue(f)
				}
			}
			op.CreatedBy = fmt.Sprintf("acc%d", round%3)
		case k < 14:
			op.Kind = store.OpDelete
		case k < 16:
			op.Kind = store.OpTrash
		case k < 17:
			op.Kind = store.OpUntrash
		case k < 19:
			op.Kind = store.OpAddRef
			op.Field, op.RefID = "refs", m.randomID()
		default:
			op.Kind = store.OpRemoveRef
			op.Field, op.RefID = "refs", m.randomID()
		}
		m.apply(&op)
		ops = append(ops, op)
	}
	return ops
}

// apply is the model of one op, written from store.go's documentation.
func (m *model) apply(op *store.Op) {
	r := m.next[op.ID]
	switch op.Kind {
	case store.OpUpsert:
		if r == nil {
			r = &store.Record{Type: op.Type, ID: op.ID, Created: op.Now, CreatedBy: op.CreatedBy, Fields: map[string]any{}}
			m.next[op.ID] = r
		}
		r.Updated = op.Now
		for k, v := range op.Set {
			r.Fields[k] = cloneValue(v)
		}
	case store.OpDelete:
		delete(m.next, op.ID)
	case store.OpTrash:
		if r != nil && r.Trashed == nil {
			now := op.Now
			r.Trashed = &now
		}
	case store.OpUntrash:
		if r != nil {
			r.Trashed = nil
		}
	case store.OpAddRef, store.OpRemoveRef:
		if r == nil {
			return
		}
		l, _ := r.Fields[op.Field].([]any)
		has := slices.Contains(l, any(op.RefID))
		if op.Kind == store.OpAddRef && !has {
			r.Fields[op.Field] = append(slices.Clone(l), op.RefID)
			r.Updated = op.Now
		}
		if op.Kind == store.OpRemoveRef && has {
			r.Fields[op.Field] = slices.DeleteFunc(slices.Clone(l), func(v any) bool { return v == any(op.RefID) })
			r.Updated = op.Now
		}
	}
}

func (m *model) randomQuery() *store.Query {
	atoms := []func() string{
		func() string {
			return fmt.Sprintf("price %s %s", m.pick("=", "!=", "<", "<=", ">", ">="), m.pick("2", "2.5", "-1", "0", "7", "1e15", "1152921504606846976", "-3.25", "100"))
		},
		func() string {
			lo, hi := m.pick("-1", "0", "2", "2.5"), m.pick("2", "2.5", "7", "1e15")
			return fmt.Sprintf("price IN %s%s, %s%s", m.pick("[", "("), lo, hi, m.pick("]", ")"))
		},
		func() string { return m.pick("EXIST price", "price = null", "NOT EXIST cat", "EXIST tags").(string) },
		func() string {
			return fmt.Sprintf("cat %s '%s'", m.pick("=", "!=", ">", "<=", "^"), m.pick("", "a", "b", "c", "ab"))
		},
		func() string { return fmt.Sprintf("cat IN ['a', '%s')", m.pick("b", "c", "ab")) },
		func() string { return fmt.Sprintf("tags = '%s'", m.pick("x", "y", "z")) },
		func() string { return fmt.Sprintf("NOT tags = '%s'", m.pick("x", "y")) },
		func() string { return fmt.Sprintf("ref = '%s'", m.randomID()) },
		func() string { return fmt.Sprintf("refs = '%s'", m.randomID()) },
		func() string { return fmt.Sprintf("n %s %d", m.pick("=", ">", "<"), m.rnd.IntN(20)) },
		func() string {
			return fmt.Sprintf("cat = '%s' AND n %s %d", m.pick("a", "b"), m.pick("=", ">=", "<"), m.rnd.IntN(20))
		},
		func() string { return fmt.Sprintf("title ^ 't%d'", m.rnd.IntN(40)) },
		func() string { return fmt.Sprintf("title = 't%d'", m.rnd.IntN(400)) },
		func() string { return fmt.Sprintf("core.id = '%s'", m.randomID()) },
		func() string { return fmt.Sprintf("meta = %s", m.pick("'x'", "'z'", "3", "true")) },
		func() string {
			return fmt.Sprintf("core.created %s '%s'", m.pick(">", "<="), base.Add(time.Duration(m.rnd.IntN(m.clock+1))*time.Second).Format(time.RFC3339))
		},
		func() string { return fmt.Sprintf("ref.price > %d", m.rnd.IntN(8)) },
		func() string { return fmt.Sprintf("refs.cat = '%s'", m.pick("a", "b")) },
		func() string { return "*" },
	}
	var parts []string
	for range 1 + m.rnd.IntN(3) {
		parts = append(parts, "("+atoms[m.rnd.IntN(len(atoms))]()+")")
	}
	text := strings.Join(parts, m.pick(" AND ", " AND ", " OR ").(string))
	if m.rnd.IntN(8) == 0 {
		text = "NOT (" + text + ")"
	}
	text += m.pick("", "", " SORT price", " SORT price DESC", " SORT cat DESC, price", " SORT title DESC",
		" SORT n", " SORT core.created DESC", " SORT core.created", " SORT meta DESC",
		" SORT core.id DESC", " SORT core.id", " SORT cat, core.id DESC, price").(string)
	pq, err := arcql.Parse(text, arcql.DefaultLimits())
	if err != nil {
		panic(fmt.Sprintf("Parse(%q): %v", text, err))
	}
	bq, err := arcql.Bind(pq, randSchema{}, "R", "rand")
	if err != nil {
		panic(fmt.Sprintf("Bind(%q): %v", text, err))
	}
	q := &store.Query{
		Type:           "R",
		Filter:         bq.Filter,
		Sort:           bq.Sort,
		IncludeTrashed: m.rnd.IntN(5) == 0,
		Backward:       m.rnd.IntN(3) == 0,
		Limit:          m.pick(0, 1, 3, 10).(int),
		Skip:           m.pick(0, 0, 1, 4).(int),
	}
	// Cursors: mostly records the query selects, sometimes not.
	full, _ := m.answer(&store.Query{Type: q.Type, Filter: q.Filter, Sort: q.Sort, IncludeTrashed: q.IncludeTrashed})
	cursor := func() string {
		if len(full) == 0 || m.rnd.IntN(10) == 0 {
			return m.randomID()
		}
		return full[m.rnd.IntN(len(full))]
	}
	if m.rnd.IntN(3) == 0 {
		q.After = cursor()
	}
	if m.rnd.IntN(4) == 0 {
		q.Before = cursor()
	}
	return q
}

// answer is the reference result of q over the model.
func (m *model) answer(q *store.Query) ([]string, error) {
	filter := m.resolve(q.Filter)
	var sel []*store.Record
	for _, r := range m.recs {
		if (r.Trashed == nil || q.IncludeTrashed) && arcql.Match(filter, r) {
			sel = append(sel, r)
		}
	}
	slices.SortFunc(sel, func(a, b *store.Record) int { return arcql.CompareSort(q.Sort, a, b) })
	pos := func(id string) int {
		return slices.IndexFunc(sel, func(r *store.Record) bool { return r.ID == id })
	}
	lo, hi := 0, len(sel)
	if q.After != "" {
		i := pos(q.After)
		if i < 0 {
			return nil, store.ErrNotFound
		}
		lo = i + 1
	}
	if q.Before != "" {
		i := pos(q.Before)
		if i < 0 {
			return nil, store.ErrNotFound
		}
		hi = i
	}
	if lo > hi {
		lo = hi
	}
	win := sel[lo:hi]
	if q.Backward {
		win = win[:max(0, len(win)-q.Skip)]
		if q.Limit > 0 && len(win) > q.Limit {
			win = win[len(win)-q.Limit:]
		}
	} else {
		win = win[min(q.Skip, len(win)):]
		if q.Limit > 0 && len(win) > q.Limit {
			win = win[:q.Limit]
		}
	}
	return ids(win), nil
}

// resolve replaces hops by the ids of the model's matching, untrashed
// targets.
func (m *model) resolve(e arcql.Expr) arcql.Expr {
	switch n := e.(type) {
	case *arcql.And:
		out := &arcql.And{}
		for _, t := range n.Terms {
			out.Terms = append(out.Terms, m.resolve(t))
		}
		return out
	case *arcql.Or:
		out := &arcql.Or{}
		for _, t := range n.Terms {
			out.Terms = append(out.Terms, m.resolve(t))
		}
		return out
	case *arcql.Not:
		return &arcql.Not{X: m.resolve(n.X)}
	case *arcql.Hop:
		sub := m.resolve(n.Sub)
		in := &arcql.InIDs{Field: n.Field}
		for _, id := range slices.Sorted(maps.Keys(m.recs)) {
			r := m.recs[id]
			if r.Trashed == nil && arcql.Match(sub, r) {
				in.IDs = append(in.IDs, id)
			}
		}
		return in
	}
	return e
}

func describe(q *store.Query) string {
	text := (&arcql.Query{Filter: q.Filter, Sort: q.Sort}).String()
	return fmt.Sprintf("%q trashed=%v backward=%v after=%q before=%q skip=%d limit=%d",
		text, q.IncludeTrashed, q.Backward, q.After, q.Before, q.Skip, q.Limit)
}

func ids(recs []*store.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// copyRecord deep-copies a record.
func copyRecord(r *store.Record) *store.Record {
	c := *r
	if r.Trashed != nil {
		t := *r.Trashed
		c.Trashed = &t
	}
	c.Fields = make(map[string]any, len(r.Fields))
	for k, v := range r.Fields {
		c.Fields[k] = cloneValue(v)
	}
	return &c
}
