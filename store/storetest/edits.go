package storetest

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/corehq/core/store"
)

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

// testEdits: OpMath and OpRemoveValues compute from the stored record, lose
// nothing under concurrent writers, refuse what they cannot compute with
// nothing of the Write applied, and do nothing to a missing record.
func testEdits(t *testing.T, e *env) {
	e.declare(e.inst)
	e.write(upsert("Book", "b1", at(0), map[string]any{"title": "t", "price": 6.0, "authorid": int64(7),
		"tags": []any{"a", "b", "a", "c", int64(1)}}))
	t.Run("math in Hypi's order", func(t *testing.T) {
		res := e.write(store.Op{Kind: store.OpMath, Type: "Book", ID: "b1", Now: at(1), Math: map[string]store.Arith{
			"price":    {Div: f64(3), Times: f64(10), Minus: f64(2), Plus: f64(30)},
			"authorid": {IDiv: i64(2), ITimes: i64(3), IPlus: i64(1), Whole: true, Min: math.MinInt32, Max: math.MaxInt32},
			"missing":  {Plus: f64(1.5)},
		}})
		r := e.get(e.inst, "Book", "b1")
		if !res[0].Changed || r.Fields["price"] != 48.0 || r.Fields["authorid"] != int64(10) || r.Fields["missing"] != 1.5 || !r.Updated.Equal(at(1)) {
			t.Errorf("after math: %v %v (changed %v)", r.Fields, r.Updated, res[0].Changed)
		}
	})
	t.Run("refused whole", func(t *testing.T) {
		for name, a := range map[string]store.Arith{
			"beyond Int":   {ITimes: i64(math.MaxInt32), Whole: true, Min: math.MinInt32, Max: math.MaxInt32},
			"not a number": {Plus: f64(1)},
		} {
			field := "authorid"
			if name == "not a number" {
				field = "title"
			}
			_, err := e.s.Write(e.ctx, e.inst, []store.Op{
				upsert("Book", "b1", at(2), map[string]any{"title": "changed"}),
				{Kind: store.OpMath, Type: "Book", ID: "b1", Now: at(2), Math: map[string]store.Arith{field: a}},
			}, store.Quota{})
			var fe *store.FieldError
			if !errors.Is(err, store.ErrArith) || !errors.As(err, &fe) || fe.Field != field {
				t.Errorf("%s: %v, want a FieldError of %s wrapping ErrArith", name, err, field)
			}
		}
		if got := e.get(e.inst, "Book", "b1").Fields["title"]; got != "t" {
			t.Errorf("a refused Write changed the title: %v", got)
		}
		if _, err := e.s.Write(e.ctx, e.inst, []store.Op{{Kind: store.OpMath, Type: "Book", ID: "b1", Now: at(2),
			Math: map[string]store.Arith{"price": {Div: f64(0)}}}}, store.Quota{}); err == nil {
			t.Error("a division by zero was accepted")
		}
	})
	t.Run("remove values", func(t *testing.T) {
		res := e.write(store.Op{Kind: store.OpRemoveValues, Type: "Book", ID: "b1", Field: "tags", Now: at(3), Values: []any{"a", 1, "zz"}})
		if got := e.get(e.inst, "Book", "b1").Fields["tags"]; !res[0].Changed || !store.SameValue(got, []any{"b", "c"}) {
			t.Errorf("tags after removing a, 1, zz: %v", got)
		}
		res = e.write(store.Op{Kind: store.OpRemoveValues, Type: "Book", ID: "nope", Field: "tags", Now: at(3), Values: []any{"b"}},
			store.Op{Kind: store.OpMath, Type: "Book", ID: "nope", Now: at(3), Math: map[string]store.Arith{"price": {Plus: f64(1)}}})
		if res[0].Changed || res[1].Changed {
			t.Errorf("edits of a missing record: %+v", res)
		}
		e.wantNotFound(e.inst, "Book", "nope")
	})
	t.Run("no lost update", func(t *testing.T) {
		const n = 50
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				op := store.Op{Kind: store.OpMath, Type: "Book", ID: "b1", Now: at(4 + i), Math: map[string]store.Arith{
					"authorid": {IPlus: i64(1), Whole: true, Min: math.MinInt32, Max: math.MaxInt32}}}
				if _, err := e.s.Write(e.ctx, e.inst, []store.Op{op}, store.Quota{}); err != nil {
					t.Errorf("Write: %v", err)
				}
			}()
		}
		wg.Wait()
		if got := e.get(e.inst, "Book", "b1").Fields["authorid"]; got != int64(10+n) {
			t.Errorf("after %d concurrent increments: %v, want %d", n, got, 10+n)
		}
	})
}
