package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
)

func testGet(t *testing.T, e *env) {
	e.loadLibrary(e.inst)
	t.Run("one", func(t *testing.T) {
		got := e.get(e.inst, "Book", "b1")
		want := &store.Record{
			Type: "Book", ID: "b1", Created: at(1), Updated: at(1), CreatedBy: "acc1",
			Fields: map[string]any{"title": "Inferno", "authorid": int64(1), "price": 12.5},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Get (-want +got):\n%s", d)
		}
	})
	t.Run("missing id", func(t *testing.T) { e.wantNotFound(e.inst, "Book", "nope") })
	t.Run("missing type", func(t *testing.T) { e.wantNotFound(e.inst, "Nothing", "b1") })
	t.Run("id of another type", func(t *testing.T) { e.wantNotFound(e.inst, "Author", "b1") })
	t.Run("many", func(t *testing.T) {
		got, err := e.s.GetMany(e.ctx, e.inst, "Book", []string{"b2", "nope", "b1", "b2"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got["b1"] == nil || got["b2"] == nil {
			t.Fatalf("GetMany = %v, want b1 and b2", got)
		}
		if d := cmp.Diff(e.get(e.inst, "Book", "b2"), got["b2"]); d != "" {
			t.Errorf("GetMany b2 differs from Get (-get +many):\n%s", d)
		}
	})
	t.Run("many none", func(t *testing.T) {
		got, err := e.s.GetMany(e.ctx, e.inst, "Book", nil)
		if err != nil || len(got) != 0 {
			t.Errorf("GetMany(nil) = %v, %v; want empty", got, err)
		}
		got, err = e.s.GetMany(e.ctx, e.inst, "Nothing", []string{"b1"})
		if err != nil || len(got) != 0 {
			t.Errorf("GetMany of a missing type = %v, %v; want empty", got, err)
		}
	})
	t.Run("returned records are copies", func(t *testing.T) {
		r := e.get(e.inst, "Author", "a1")
		r.Fields["name"] = "changed"
		r.Fields["booklist"].([]any)[0] = "changed"
		again := e.get(e.inst, "Author", "a1")
		if again.Fields["name"] != "Dante Alighieri" || again.Fields["booklist"].([]any)[0] != "b1" {
			t.Errorf("changing a returned record changed the store: %v", again.Fields)
		}
	})
}

func testUpsert(t *testing.T, e *env) {
	e.declare(e.inst)
	created := e.write(store.Op{
		Kind: store.OpUpsert, Type: "Author", ID: "x1", Now: at(1), CreatedBy: "acc1", Impl: "Author",
		Set: map[string]any{"name": "Ann", "age": int64(30), "booklist": []any{"b1", "b2"}, "bestbook": "b1"},
	})[0]
	t.Run("create", func(t *testing.T) {
		want := store.OpResult{Created: true, Changed: true, Record: &store.Record{
			Type: "Author", ID: "x1", Created: at(1), Updated: at(1), CreatedBy: "acc1", Impl: "Author",
			Fields: map[string]any{"name": "Ann", "age": int64(30), "booklist": []any{"b1", "b2"}, "bestbook": "b1"},
		}}
		if d := cmp.Diff(want, created); d != "" {
			t.Errorf("create result (-want +got):\n%s", d)
		}
		if d := cmp.Diff(want.Record, e.get(e.inst, "Author", "x1")); d != "" {
			t.Errorf("Get after create (-want +got):\n%s", d)
		}
	})

	merged := e.write(store.Op{
		Kind: store.OpUpsert, Type: "Author", ID: "x1", Now: at(2), CreatedBy: "acc2", Impl: "Other",
		Set: map[string]any{"name": "Anne", "bestbook": nil, "booklist": []any{"b3"}},
	})[0]
	t.Run("merge", func(t *testing.T) {
		if merged.Created || !merged.Changed {
			t.Errorf("merge result Created=%v Changed=%v, want false, true", merged.Created, merged.Changed)
		}
		for name, r := range map[string]*store.Record{"result": merged.Record, "Get": e.get(e.inst, "Author", "x1")} {
			if r == nil {
				t.Fatalf("%s: no record", name)
			}
			if !r.Created.Equal(at(1)) || !r.Updated.Equal(at(2)) {
				t.Errorf("%s: created %v updated %v, want %v and %v", name, r.Created, r.Updated, at(1), at(2))
			}
			if r.CreatedBy != "acc1" {
				t.Errorf("%s: createdBy %q changed by a merge, want acc1", name, r.CreatedBy)
			}
			if r.Fields["name"] != "Anne" {
				t.Errorf("%s: name %v, want Anne", name, r.Fields["name"])
			}
			if r.Fields["age"] != int64(30) {
				t.Errorf("%s: absent field age = %v, want it kept (30)", name, r.Fields["age"])
			}
			if v := r.Fields["bestbook"]; v != nil {
				t.Errorf("%s: bestbook = %v, want cleared by nil", name, v)
			}
			if d := cmp.Diff([]any{"b3"}, r.Fields["booklist"]); d != "" {
				t.Errorf("%s: booklist not replaced whole (-want +got):\n%s", name, d)
			}
		}
	})
	t.Run("cleared field is not found", func(t *testing.T) {
		if got := e.findText(e.inst, "Author", "EXIST bestbook"); len(got) != 0 {
			t.Errorf("EXIST bestbook = %v, want none", got)
		}
		if d := diffIDs([]string{"x1"}, e.findText(e.inst, "Author", "bestbook = null")); d != "" {
			t.Errorf("bestbook = null (-want +got):\n%s", d)
		}
	})
	t.Run("empty set touches only updated", func(t *testing.T) {
		r := e.write(upsert("Author", "x1", at(3), nil))[0]
		if r.Created || !r.Changed || !r.Record.Updated.Equal(at(3)) || r.Record.Fields["name"] != "Anne" {
			t.Errorf("empty upsert = %+v / %+v", r, r.Record)
		}
	})
	t.Run("same record twice in one write", func(t *testing.T) {
		res := e.write(
			upsert("Book", "y1", at(4), map[string]any{"title": "One", "price": 1.5}),
			upsert("Book", "y1", at(5), map[string]any{"title": "Two"}),
		)
		if !res[0].Created || res[1].Created {
			t.Errorf("Created = %v, %v; want true, false", res[0].Created, res[1].Created)
		}
		got := e.get(e.inst, "Book", "y1")
		want := map[string]any{"title": "Two", "price": 1.5}
		if d := cmp.Diff(want, got.Fields); d != "" || !got.Created.Equal(at(4)) || !got.Updated.Equal(at(5)) {
			t.Errorf("after two upserts: %v %v (-want +got fields):\n%s", got.Created, got.Updated, d)
		}
	})
	t.Run("input not retained", func(t *testing.T) {
		set := map[string]any{"title": "Kept", "tags": []any{"a"}}
		e.write(upsert("Book", "y2", at(6), set))
		set["title"] = "changed"
		set["tags"].([]any)[0] = "changed"
		got := e.get(e.inst, "Book", "y2")
		if got.Fields["title"] != "Kept" || got.Fields["tags"].([]any)[0] != "a" {
			t.Errorf("changing the input after Write changed the record: %v", got.Fields)
		}
	})
}

func testOpResults(t *testing.T, e *env) {
	e.loadLibrary(e.inst)
	tests := []struct {
		name string
		op   store.Op
		want store.OpResult
	}{
		{"delete missing", store.Op{Kind: store.OpDelete, Type: "Book", ID: "nope", Now: at(50)}, store.OpResult{}},
		{"trash missing", store.Op{Kind: store.OpTrash, Type: "Book", ID: "nope", Now: at(50)}, store.OpResult{}},
		{"untrash missing", store.Op{Kind: store.OpUntrash, Type: "Book", ID: "nope", Now: at(50)}, store.OpResult{}},
		{"add ref missing", store.Op{Kind: store.OpAddRef, Type: "Author", ID: "nope", Field: "booklist", RefID: "b1", Now: at(50)}, store.OpResult{}},
		{"remove ref missing", store.Op{Kind: store.OpRemoveRef, Type: "Author", ID: "nope", Field: "booklist", RefID: "b1", Now: at(50)}, store.OpResult{}},
		{"missing type", store.Op{Kind: store.OpDelete, Type: "Nothing", ID: "b1", Now: at(50)}, store.OpResult{}},
		{"trash", store.Op{Kind: store.OpTrash, Type: "Book", ID: "b1", Now: at(50)}, store.OpResult{Changed: true}},
		{"untrash", store.Op{Kind: store.OpUntrash, Type: "Book", ID: "b1", Now: at(51)}, store.OpResult{Changed: true}},
		{"add ref", store.Op{Kind: store.OpAddRef, Type: "Author", ID: "a3", Field: "booklist", RefID: "b8", Now: at(52)}, store.OpResult{Changed: true}},
		{"remove ref", store.Op{Kind: store.OpRemoveRef, Type: "Author", ID: "a3", Field: "booklist", RefID: "b8", Now: at(53)}, store.OpResult{Changed: true}},
		{"delete", store.Op{Kind: store.OpDelete, Type: "Book", ID: "b8", Now: at(54)}, store.OpResult{Changed: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.write(tt.op)[0]
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
		})
	}
	t.Run("results in op order", func(t *testing.T) {
		res := e.write(
			store.Op{Kind: store.OpDelete, Type: "Book", ID: "nope", Now: at(60)},
			upsert("Book", "n1", at(60), map[string]any{"title": "N"}),
			upsert("Book", "b2", at(60), map[string]any{"title": "Purgatorio II"}),
			store.Op{Kind: store.OpTrash, Type: "Book", ID: "b3", Now: at(60)},
		)
		got := []bool{res[0].Changed, res[1].Created, res[1].Changed, res[2].Created, res[2].Changed, res[3].Changed}
		want := []bool{false, true, true, false, true, true}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Changed/Created flags (-want +got):\n%s", d)
		}
		if res[1].Record == nil || res[1].Record.ID != "n1" || res[2].Record == nil || res[2].Record.ID != "b2" {
			t.Errorf("upsert results carry records %v, %v", res[1].Record, res[2].Record)
		}
	})
}

func testRequired(t *testing.T, e *env) {
	e.declare(e.inst)
	tests := []struct {
		name string
		set  map[string]any
	}{
		{"absent", map[string]any{"price": 1.0}},
		{"null", map[string]any{"title": nil, "price": 1.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := upsert("Book", "r1", at(1), tt.set)
			op.Required = []string{"title"}
			_, err := e.s.Write(e.ctx, e.inst, []store.Op{op}, store.Quota{})
			checkFieldError(t, err, &store.FieldError{Err: store.ErrRequired, Type: "Book", Field: "title"})
			e.wantNotFound(e.inst, "Book", "r1")
		})
	}
	t.Run("present", func(t *testing.T) {
		op := upsert("Book", "r2", at(1), map[string]any{"title": "T"})
		op.Required = []string{"title"}
		if !e.write(op)[0].Created {
			t.Error("not created")
		}
	})
	t.Run("not checked on update", func(t *testing.T) {
		op := upsert("Book", "r2", at(2), map[string]any{"price": 2.0})
		op.Required = []string{"title", "authorid"}
		e.write(op)
	})
}

func testUnique(t *testing.T, e *env, opts Options) {
	e.declare(e.inst)
	e.write(upsert("Account", "u1", at(1), map[string]any{"username": "ann", "emails": []any{"a@x.org", "b@x.org"}}))

	violations := []struct {
		name  string
		ops   []store.Op
		field string
		value any
	}{
		{"scalar taken", []store.Op{upsert("Account", "u2", at(2), map[string]any{"username": "ann"})}, "username", "ann"},
		{"list element taken", []store.Op{upsert("Account", "u2", at(2), map[string]any{"username": "bob", "emails": []any{"c@x.org", "b@x.org"}})}, "emails", "b@x.org"},
		{"taken by an earlier op of the same write", []store.Op{
			upsert("Account", "u2", at(2), map[string]any{"username": "cid"}),
			upsert("Account", "u3", at(2), map[string]any{"username": "cid"}),
		}, "username", "cid"},
		{"taken on update", []store.Op{
			upsert("Account", "u2", at(2), map[string]any{"username": "dan"}),
			upsert("Account", "u2", at(3), map[string]any{"username": "ann"}),
		}, "username", "ann"},
	}
	for _, tt := range violations {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.s.Write(e.ctx, e.inst, tt.ops, store.Quota{})
			checkFieldError(t, err, &store.FieldError{Err: store.ErrUnique, Type: "Account", Field: tt.field, Value: tt.value})
			if !opts.WritesNotAtomic {
				e.wantNotFound(e.inst, "Account", "u2")
				e.wantNotFound(e.inst, "Account", "u3")
			}
			// Clean up what a non-atomic store may have left.
			e.write(
				store.Op{Kind: store.OpDelete, Type: "Account", ID: "u2", Now: at(9)},
				store.Op{Kind: store.OpDelete, Type: "Account", ID: "u3", Now: at(9)},
			)
		})
	}

	allowed := []struct {
		name string
		op   store.Op
	}{
		{"same record keeps its value", upsert("Account", "u1", at(3), map[string]any{"username": "ann", "emails": []any{"b@x.org", "a@x.org"}})},
		{"same record repeats an element", upsert("Account", "u1", at(3), map[string]any{"emails": []any{"a@x.org", "a@x.org", "b@x.org"}})},
		{"missing value is not unique", upsert("Account", "n1", at(3), map[string]any{"emails": []any{"n1@x.org"}})},
		{"second missing value", upsert("Account", "n2", at(3), map[string]any{"emails": []any{"n2@x.org"}})},
		{"null value is not unique", upsert("Account", "n3", at(3), map[string]any{"username": nil})},
		{"other value", upsert("Account", "u4", at(3), map[string]any{"username": "ann2", "emails": []any{"c@x.org"}})},
		{"case matters", upsert("Account", "u5", at(3), map[string]any{"username": "Ann"})},
	}
	for _, tt := range allowed {
		t.Run(tt.name, func(t *testing.T) { e.write(tt.op) })
	}

	t.Run("freed value can be taken", func(t *testing.T) {
		e.write(upsert("Account", "u1", at(4), map[string]any{"username": "anne", "emails": []any{"a@x.org"}}))
		e.write(upsert("Account", "u6", at(5), map[string]any{"username": "ann", "emails": []any{"b@x.org"}}))
		e.write(store.Op{Kind: store.OpDelete, Type: "Account", ID: "u6", Now: at(6)})
		e.write(upsert("Account", "u7", at(7), map[string]any{"username": "ann"}))
	})
	t.Run("unique per instance", func(t *testing.T) {
		other := otherInstance()
		e.declare(other)
		e.writeIn(other, upsert("Account", "z1", at(1), map[string]any{"username": "ann", "emails": []any{"a@x.org"}}))
	})
}

func testAtomicity(t *testing.T, e *env, opts Options) {
	if opts.WritesNotAtomic {
		t.Skip("the store does not promise atomic writes")
	}
	e.loadLibrary(e.inst)
	e.write(upsert("Account", "u1", at(1), map[string]any{"username": "ann"}))
	before := map[string]*store.Record{
		"b1": e.get(e.inst, "Book", "b1"),
		"a1": e.get(e.inst, "Author", "a1"),
	}
	required := upsert("Book", "new2", at(10), map[string]any{"price": 1.0})
	required.Required = []string{"title"}
	tests := []struct {
		name string
		bad  store.Op
		want error
	}{
		{"unique violation last", upsert("Account", "u2", at(10), map[string]any{"username": "ann"}), store.ErrUnique},
		{"required field missing last", required, store.ErrRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := []store.Op{
				upsert("Book", "new1", at(10), map[string]any{"title": "New", "price": 3.0}),
				upsert("Book", "b1", at(10), map[string]any{"title": "Changed", "price": 99.0}),
				{Kind: store.OpTrash, Type: "Book", ID: "b2", Now: at(10)},
				{Kind: store.OpDelete, Type: "Book", ID: "b3", Now: at(10)},
				{Kind: store.OpAddRef, Type: "Author", ID: "a1", Field: "booklist", RefID: "new1", Now: at(10)},
				tt.bad,
			}
			if _, err := e.s.Write(e.ctx, e.inst, ops, store.Quota{}); !errors.Is(err, tt.want) {
				t.Fatalf("Write = %v, want %v", err, tt.want)
			}
			e.wantNotFound(e.inst, "Book", "new1")
			e.wantNotFound(e.inst, "Book", "new2")
			e.wantNotFound(e.inst, "Account", "u2")
			for id, want := range before {
				typ := "Book"
				if id[0] == 'a' {
					typ = "Author"
				}
				if d := cmp.Diff(want, e.get(e.inst, typ, id)); d != "" {
					t.Errorf("%s changed by a failed write (-before +after):\n%s", id, d)
				}
			}
			if r := e.get(e.inst, "Book", "b2"); r.Trashed != nil {
				t.Error("b2 trashed by a failed write")
			}
			e.get(e.inst, "Book", "b3")
			// The indexes were rolled back too.
			if d := diffIDs([]string{"b1"}, e.findText(e.inst, "Book", "price = 12.5")); d != "" {
				t.Errorf("index on price after a failed write (-want +got):\n%s", d)
			}
			if got := e.findText(e.inst, "Book", "price = 99"); len(got) != 0 {
				t.Errorf("price = 99 finds %v after a failed write", got)
			}
			if d := diffIDs([]string{"a1"}, e.findText(e.inst, "Author", "booklist = 'b3'")); d != "" {
				t.Errorf("booklist index after a failed write (-want +got):\n%s", d)
			}
			if got := e.findText(e.inst, "Author", "booklist = 'new1'"); len(got) != 0 {
				t.Errorf("booklist = 'new1' finds %v after a failed write", got)
			}
		})
	}
}

func testDelete(t *testing.T, e *env) {
	e.loadLibrary(e.inst)
	e.write(store.Op{Kind: store.OpDelete, Type: "Book", ID: "b1", Now: at(50)})
	e.wantNotFound(e.inst, "Book", "b1")
	tests := []struct {
		name, typ, text string
		want            []string
	}{
		{"not found by index", "Book", "price = 12.5", nil},
		{"not found by scan", "Book", "title = 'Inferno'", nil},
		{"others stay", "Book", "authorid = 1", []string{"b2", "b3"}},
		{"references are not touched", "Author", "booklist = 'b1'", []string{"a1"}},
		{"hop to a deleted record", "Author", "bestbook.title = 'Inferno'", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := diffIDs(tt.want, e.findText(e.inst, tt.typ, tt.text)); d != "" {
				t.Errorf("%s (-want +got):\n%s", tt.text, d)
			}
		})
	}
	t.Run("recreate", func(t *testing.T) {
		r := e.write(upsert("Book", "b1", at(60), map[string]any{"title": "Inferno II"}))[0]
		if !r.Created || !r.Record.Created.Equal(at(60)) || r.Record.Fields["price"] != nil {
			t.Errorf("recreated record = %+v %v", r, r.Record)
		}
	})
}

// testValueTypes checks that every value type of store.Record reads back
// as written.
func testValueTypes(t *testing.T, e *env) {
	e.declare(e.inst)
	fields := map[string]any{
		"s":     "text with \x00 and ünïcode",
		"empty": "",
		"i":     int64(-42),
		"big":   int64(1<<62 + 1),
		"f":     3.0,
		"frac":  -0.125,
		"t":     true,
		"false": false,
		"null":  nil,
		"list":  []any{"a", int64(1), 2.5, nil, []any{}, map[string]any{"k": "v"}},
		"none":  []any{},
		"obj":   map[string]any{"a": map[string]any{"b": []any{true}}, "n": nil},
	}
	e.write(upsert("Thing", "v1", at(1), fields))
	got := e.get(e.inst, "Thing", "v1")
	if d := cmp.Diff(fields, got.Fields); d != "" {
		t.Errorf("fields (-written +read):\n%s", d)
	}
	t.Run("trashed time", func(t *testing.T) {
		when := t0.Add(1500 * time.Millisecond)
		e.write(store.Op{Kind: store.OpTrash, Type: "Thing", ID: "v1", Now: when})
		if r := e.get(e.inst, "Thing", "v1"); r.Trashed == nil || !r.Trashed.Equal(when) {
			t.Errorf("trashed = %v, want %v", r.Trashed, when)
		}
	})
}
