package arcql

import (
	"slices"
	"time"
)

// testSchema is the Author/Book schema of docs/arcql.md's examples, plus an
// embedded object, a Json field, DateTime fields and hidden fields.
type testSchema map[string]map[string]Field

var schema = testSchema{
	"Author": {
		"name":     {Kind: FieldString},
		"age":      {Kind: FieldInt},
		"bestbook": {Kind: FieldRef, Target: "Book"},
		"booklist": {Kind: FieldRef, List: true, Target: "Book"},
		"address":  {Kind: FieldObject, Target: "Address"},
		"homes":    {Kind: FieldObject, List: true, Target: "Address"},
		"data":     {Kind: FieldJSON},
		"born":     {Kind: FieldTime},
		"active":   {Kind: FieldBoolean},
		"genre":    {Kind: FieldEnum},
		"tags":     {Kind: FieldString, List: true},
		"password": {Kind: FieldString, Hidden: true},
		"desc":     {Kind: FieldString}, // named like a keyword
	},
	"Book": {
		"title":     {Kind: FieldString},
		"authorid":  {Kind: FieldInt},
		"price":     {Kind: FieldFloat},
		"author":    {Kind: FieldRef, Target: "Author"},
		"published": {Kind: FieldTime},
	},
	"Address": {
		"city":   {Kind: FieldString},
		"zip":    {Kind: FieldInt},
		"owner":  {Kind: FieldRef, Target: "Author"},
		"secret": {Kind: FieldString, Hidden: true},
	},
	"Account": {
		"username": {Kind: FieldString},
		"password": {Kind: FieldString, Hidden: true},
	},
}

// Field answers the metadata names for Author and Book itself, and leaves
// them to Bind's defaults for Account, so that both paths are exercised.
func (s testSchema) Field(typ, name string) (Field, bool) {
	if typ == "Author" || typ == "Book" {
		switch name {
		case "core.id", "core.createdBy", "core.instanceId":
			return Field{Kind: FieldID}, true
		case "core.created", "core.updated", "core.trashed":
			return Field{Kind: FieldTime}, true
		}
	}
	f, ok := s[typ][name]
	return f, ok
}

// rec is a record for the evaluator, shaped like store.Record.
type rec struct {
	id      string
	created time.Time
	trashed *time.Time
	fields  map[string]any
}

func (r *rec) Value(name string) (any, bool) {
	switch name {
	case "core.id":
		return r.id, true
	case "core.created", "core.updated":
		return r.created, true
	case "core.trashed":
		if r.trashed == nil {
			return nil, false
		}
		return *r.trashed, true
	case "core.createdBy":
		return "Account1", true
	}
	v, ok := r.fields[name]
	return v, ok
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

var trashedAt = day("2026-03-01")

var books = []*rec{
	{id: "B1", created: day("2025-12-01"), fields: map[string]any{
		"title": "Inferno", "authorid": int64(4), "price": 5.99, "author": "Author4",
		"published": "1320-01-01T00:00:00Z",
	}},
	{id: "B2", created: day("2026-01-01"), fields: map[string]any{
		"title": "Alchemist", "authorid": int64(2), "price": 12.5, "author": "Author2",
		"published": "1988-01-01T00:00:00.5Z",
	}},
	{id: "B3", created: day("2026-02-01"), fields: map[string]any{
		"title": "Wise and Otherwise", "authorid": int64(1), "price": 5.99, "author": "Author1",
		"published": "2002-06-01T12:00:00+02:00",
	}},
	{id: "B4", created: day("2026-02-02"), trashed: &trashedAt, fields: map[string]any{
		"title": "O'Reilly", "authorid": 2, "price": int64(30),
	}},
	{id: "B5", created: day("2026-02-03"), fields: map[string]any{
		"title": nil, "authorid": float64(1),
	}},
}

var authors = []*rec{
	{id: "Author1", created: day("2025-01-01"), fields: map[string]any{
		"name": "Sudha Murty", "age": int64(70), "bestbook": "B3", "booklist": []any{"B3", "B1"},
		"address": map[string]any{"city": "Bangalore", "zip": int64(560001), "owner": "Author2"},
		"homes":   []any{map[string]any{"city": "Shiggaon"}, map[string]any{"city": "Hubli"}},
		"data":    map[string]any{"n": 3.0, "list": []any{map[string]any{"k": "a"}, map[string]any{"k": "b"}}},
		"born":    "1950-08-19T00:00:00Z", "active": true, "genre": "FICTION",
		"tags": []any{"kannada", "english"}, "password": "hunter2", "desc": "writer",
	}},
	{id: "Author2", created: day("2025-02-01"), fields: map[string]any{
		"name": "Paulo Coelho", "age": 50.0, "bestbook": "B2", "booklist": []any{"B2"},
		"born": "1947-08-24T10:00:00Z", "active": false, "tags": []any{},
	}},
	{id: "Author4", created: day("2025-03-01"), fields: map[string]any{
		"name": "Dante Alighieri", "bestbook": "B1", "booklist": []any{"B1", "B4"},
		"data": map[string]any{"n": "3"},
	}},
	{id: "Author5", created: day("2025-04-01"), fields: map[string]any{
		"name": "William Shakespeare", "age": nil, "booklist": []any{},
		"tags": []any{"english"},
	}},
	{id: "Author6", created: day("2025-05-01"), fields: map[string]any{
		"name": "Pérez-Reverte, Arturo 2nd", "age": int64(72), "tags": "spanish",
	}},
}

// tables maps a type to its records.
var tables = map[string][]*rec{"Book": books, "Author": authors}

// resolveHops does what a store does before evaluating: it replaces each
// *Hop with an *InIDs of the target records its Sub matches.
func resolveHops(e Expr) Expr {
	switch e := e.(type) {
	case *And:
		out := &And{}
		for _, t := range e.Terms {
			out.Terms = append(out.Terms, resolveHops(t))
		}
		return out
	case *Or:
		out := &Or{}
		for _, t := range e.Terms {
			out.Terms = append(out.Terms, resolveHops(t))
		}
		return out
	case *Not:
		return &Not{X: resolveHops(e.X)}
	case *Hop:
		sub := resolveHops(e.Sub)
		in := &InIDs{Field: e.Field, IDs: []string{}}
		for _, r := range tables[e.Target] {
			if Match(sub, r) {
				in.IDs = append(in.IDs, r.id)
			}
		}
		return in
	}
	return e
}

// find runs a bound query over a type's records the way a store does.
func find(q *Query, typ string) []string {
	f := resolveHops(q.Filter)
	var hits []*rec
	for _, r := range tables[typ] {
		if Match(f, r) {
			hits = append(hits, r)
		}
	}
	slices.SortFunc(hits, func(a, b *rec) int { return CompareSort(q.Sort, a, b) })
	ids := []string{}
	for _, r := range hits {
		ids = append(ids, r.id)
	}
	return ids
}
