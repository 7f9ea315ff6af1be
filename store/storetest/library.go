package storetest

import (
	"github.com/corehq/core/store"
)

// The library is the fixture of the filter, sort and hop cases. Ids sort in
// the order listed; book i and author i are created at minute i (books) or
// 20+i (authors), by "acc1" for odd i and "acc2" for even i.
//
//	b1 Inferno             authorid 1  price 12.5
//	b2 Purgatorio          authorid 1  price 9.99
//	b3 Paradiso            authorid 1  price 15
//	b4 Wise and Otherwise  authorid 2  price 5.99
//	b5 Alchemist           authorid 3  price 5.99
//	b6 O'Reilly Guide      authorid 2  (no price)
//	b7 The Mahabharata     authorid 2  price 20
//	b8 Gitanjali           authorid 4  price null
//
//	a1 Dante Alighieri      age 56  bestbook b1  booklist [b1 b2 b3]
//	a2 Sudha Murty          age 75  bestbook b4  booklist [b4 b6 b7]
//	a3 Paulo Coelho         age 77  bestbook b5  booklist [b5]
//	a4 Rabindranath Tagore  (no age)             booklist []
//	a5 William Shakespeare  age 52  (no bestbook, no booklist)
var (
	libraryBooks = []map[string]any{
		{"title": "Inferno", "authorid": int64(1), "price": 12.5},
		{"title": "Purgatorio", "authorid": int64(1), "price": 9.99},
		{"title": "Paradiso", "authorid": int64(1), "price": 15.0},
		{"title": "Wise and Otherwise", "authorid": int64(2), "price": 5.99},
		{"title": "Alchemist", "authorid": int64(3), "price": 5.99},
		{"title": "O'Reilly Guide", "authorid": int64(2)},
		{"title": "The Mahabharata", "authorid": int64(2), "price": 20.0},
		{"title": "Gitanjali", "authorid": int64(4), "price": nil},
	}
	libraryAuthors = []map[string]any{
		{"name": "Dante Alighieri", "age": int64(56), "bestbook": "b1", "booklist": []any{"b1", "b2", "b3"}},
		{"name": "Sudha Murty", "age": int64(75), "bestbook": "b4", "booklist": []any{"b4", "b6", "b7"}},
		{"name": "Paulo Coelho", "age": int64(77), "bestbook": "b5", "booklist": []any{"b5"}},
		{"name": "Rabindranath Tagore", "booklist": []any{}},
		{"name": "William Shakespeare", "age": int64(52)},
	}
)

// bookID and authorID name fixture records by position (from 1).
func bookID(i int) string   { return "b" + string(rune('0'+i)) }
func authorID(i int) string { return "a" + string(rune('0'+i)) }

// loadLibrary declares the test specs and writes the library into inst.
func (e *env) loadLibrary(inst string) {
	e.t.Helper()
	e.declare(inst)
	var ops []store.Op
	for i, set := range libraryBooks {
		op := upsert("Book", bookID(i+1), at(i+1), clone(set))
		op.CreatedBy = creator(i + 1)
		ops = append(ops, op)
	}
	for i, set := range libraryAuthors {
		op := upsert("Author", authorID(i+1), at(20+i+1), clone(set))
		op.CreatedBy = creator(i + 1)
		ops = append(ops, op)
	}
	e.writeIn(inst, ops...)
}

func creator(i int) string {
	if i%2 == 1 {
		return "acc1"
	}
	return "acc2"
}

// clone copies a fixture map (and its lists) so that no test shares one.
func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if l, ok := v.([]any); ok {
			v = append([]any{}, l...)
		}
		out[k] = v
	}
	return out
}
