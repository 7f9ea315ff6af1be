package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corehq/core/store/arcql"
)

// Sentinel errors. Drivers translate their native errors into these (wrapped
// with %w where extra context helps); callers branch with errors.Is.
var (
	// ErrNotFound: the record or document does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrRequired: a record would be created without a field its type requires.
	// Returned wrapped in *FieldError.
	ErrRequired = errors.New("store: required field missing")
	// ErrUnique: a write would give two records of one type in one instance
	// the same value of a @unique field. Returned wrapped in *FieldError.
	ErrUnique = errors.New("store: unique value already taken")
	// ErrImmutable: a write would change a field an existing record keeps
	// (Op.Keep). Returned wrapped in *FieldError.
	ErrImmutable = errors.New("store: field cannot change")
	// ErrTooMany: a query would read more than the store's bound allows (for
	// example a reference hop whose sub-query matches too many records).
	ErrTooMany = errors.New("store: too many records")
	// ErrUnavailable: the backing database cannot be reached right now.
	ErrUnavailable = errors.New("store: unavailable")
)

// FieldError names the type, field and (for ErrUnique) the value of a
// violated field rule. Err is ErrRequired, ErrUnique or ErrImmutable.
type FieldError struct {
	Err   error
	Type  string
	Field string
	Value any
}

func (e *FieldError) Error() string {
	if errors.Is(e.Err, ErrUnique) {
		return fmt.Sprintf("%s.%s: value %v is already taken", e.Type, e.Field, e.Value)
	}
	if errors.Is(e.Err, ErrRequired) {
		return fmt.Sprintf("%s.%s is required", e.Type, e.Field)
	}
	if errors.Is(e.Err, ErrImmutable) {
		return fmt.Sprintf("%s.%s cannot change after the record is created", e.Type, e.Field)
	}
	return fmt.Sprintf("%s.%s: %v", e.Type, e.Field, e.Err)
}

func (e *FieldError) Unwrap() error { return e.Err }

// Record is one stored record of an instance. Fields holds the type's own
// fields by name with JSON-shaped values: string, float64 or int64, bool,
// nil, []any, map[string]any (Json and embedded objects); a reference holds
// the referenced id as a string, a list reference a []any of id strings.
// A field absent from Fields has never been set.
type Record struct {
	Type      string
	ID        string
	Created   time.Time
	Updated   time.Time
	Trashed   *time.Time
	CreatedBy string
	Impl      string
	Fields    map[string]any
}

// IDValue is the record's id (arcql.IDValuer).
func (r *Record) IDValue() string { return r.ID }

// Value returns the value at a path of the record: "core.id" and the other
// "core." names reach metadata, anything else a field. It lets arcql
// evaluate filters against a record.
func (r *Record) Value(name string) (any, bool) {
	switch name {
	case "core.id":
		return r.ID, true
	case "core.created":
		return r.Created, true
	case "core.updated":
		return r.Updated, true
	case "core.trashed":
		if r.Trashed == nil {
			return nil, false
		}
		return *r.Trashed, true
	case "core.createdBy":
		return r.CreatedBy, r.CreatedBy != ""
	case "core.impl":
		return r.Impl, r.Impl != ""
	}
	v, ok := r.Fields[name]
	return v, ok
}

// TypeSpec tells a store what it must maintain for one record type of an
// instance: unique fields, declared index sets and reference fields (which
// are indexed so that reverse lookups do not scan).
type TypeSpec struct {
	Name    string
	Unique  []string
	Indices [][]string
	Refs    []string
}

// OpKind is what a write operation does.
type OpKind int

const (
	// OpUpsert creates the record or merges Set into it: every key of Set is
	// written (a nil value clears the field), other fields keep their values.
	OpUpsert OpKind = iota
	// OpDelete removes the record; deleting a missing record is not an error.
	OpDelete
	// OpTrash sets core.trashed to Op.Now unless it is already set.
	OpTrash
	// OpUntrash clears core.trashed.
	OpUntrash
	// OpAddRef appends RefID to the list field Field unless present.
	OpAddRef
	// OpRemoveRef removes every occurrence of RefID from the list field Field.
	OpRemoveRef
	// OpMath applies Math to numeric fields of an existing record, each
	// from its stored value, in the same write: no other write between
	// the read and the change (Arith).
	OpMath
	// OpRemoveValues removes every occurrence of each of Values from the
	// list field Field of an existing record.
	OpRemoveValues
)

// IsEdit reports whether an op kind edits fields of an existing record
// from their stored values (Op.Edit): nothing happens when the record is
// missing.
func (k OpKind) IsEdit() bool {
	return k == OpAddRef || k == OpRemoveRef || k == OpMath || k == OpRemoveValues
}

// Op is one write. Now is the time the service assigns; stores do not read
// the clock.
type Op struct {
	Kind      OpKind
	Type      string
	ID        string
	Set       map[string]any
	Now       time.Time
	CreatedBy string   // for OpUpsert: the creator when the record is new
	Impl      string   // for OpUpsert: core.impl when supplied
	Required  []string // for OpUpsert: fields that must be non-null after a create
	// Keep names fields an existing record keeps (@immutable): when the
	// op would give one of them another value than the stored one (a
	// field never set counts as null; values compare as SameValue), the
	// Write fails with ErrImmutable and nothing applies. The store checks
	// it in the same atomic step as the write, so two writers that both
	// found no record cannot both set a kept field. It does not apply to
	// an op that creates the record.
	Keep  []string
	Field string // for OpAddRef / OpRemoveRef / OpRemoveValues
	RefID string // for OpAddRef / OpRemoveRef
	// Math is what an OpMath does, by field.
	Math map[string]Arith
	// Values are the values an OpRemoveValues removes.
	Values []any
	// New, for OpUpsert, says that the caller gave the op an ID it has
	// just generated with NewID: no other writer can know it yet, so the
	// op creates the record. A store may then skip what guards a record
	// against concurrent writers (the MongoDB store's lock document); it
	// must still be right if the id turns out to exist. Callers set it
	// only for ids they generated; PrepareOps sets it when it generates
	// one.
	New bool
}

// OpResult reports what one Op did.
type OpResult struct {
	// Created is true when an OpUpsert inserted a new record.
	Created bool
	// Changed is true when the op found its record (or created it) and
	// applied; false for a delete, trash or ref change of a missing record.
	Changed bool
	Record  *Record // the record after an OpUpsert
}

// Query selects records of one type of an instance.
type Query struct {
	Type string
	// Filter is a bound arcql expression; nil matches every record.
	Filter arcql.Expr
	// Sort keys apply in order; ties always break by id ascending.
	Sort []arcql.SortKey
	// IncludeTrashed returns trashed records too.
	IncludeTrashed bool
	// After returns only records strictly after the record with this id in
	// the query's order; Before only records strictly before it. A cursor
	// naming no record (or one that does not match) is ErrNotFound.
	After, Before string
	// Backward returns the records nearest the end (or nearest Before), still
	// in the query's order: the last Limit records rather than the first.
	Backward bool
	// Skip leaves out this many records (from the start, or from the end
	// when Backward) before Limit applies.
	Skip int
	// Limit is the most records to return; 0 means no limit.
	Limit int
	// IDsOnly returns records of which only the ID counts (fields and
	// metadata may or may not be filled in): for callers that need only
	// ids, such as paging cursors, and a store that can skip decoding
	// the rest or keep the answer.
	IDsOnly bool
}

// Store keeps the records of every instance and the service's own documents.
// Every method is safe for concurrent use. inst is the instance id: records
// of one instance are never visible through another.
type Store interface {
	// Declare tells the store the record types of an instance's schema. The
	// store builds indexes it lacks. It is called when an instance starts to
	// serve and whenever it moves to another release.
	Declare(ctx context.Context, inst string, types []TypeSpec) error

	// Get returns one record, trashed or not; ErrNotFound when absent.
	Get(ctx context.Context, inst, typ, id string) (*Record, error)
	// GetMany returns the records among ids that exist, keyed by id, in one
	// batched read. Missing ids are simply absent from the map.
	GetMany(ctx context.Context, inst, typ string, ids []string) (map[string]*Record, error)
	// Find returns the records a query selects, in the query's order.
	Find(ctx context.Context, inst string, q *Query) ([]*Record, error)
	// Aggregate returns the groups of an aggregate query (see AggQuery and
	// Accumulator, whose results every store gives), streaming the
	// records rather than holding them.
	Aggregate(ctx context.Context, inst string, q *AggQuery) ([]*Group, error)
	// Write applies ops in order. On the embedded store they apply
	// atomically; when one fails (ErrUnique, ErrRequired, …) none applies.
	// A Write that would take the instance past quota (Quota.Check) fails
	// with a *QuotaError before any op applies; the zero Quota bounds
	// nothing.
	Write(ctx context.Context, inst string, ops []Op, quota Quota) ([]OpResult, error)
	// Usage returns what an instance takes up: its records and their size,
	// kept by every Write (exact after a restart; counted once, by a scan,
	// for an instance stored before the store kept them), and its counters.
	// An unknown instance takes up nothing.
	Usage(ctx context.Context, inst string) (Usage, error)
	// AddCounters adds each delta to an instance's named counter, for
	// every instance in adds (instance → name → delta), in one call.
	// Concurrent adds, from any process, all count. A counter that reaches
	// 0 is removed. Usage reads them; DropInstance removes them.
	AddCounters(ctx context.Context, adds map[string]map[string]int64) error
	// DropInstance removes every record of an instance, its usage, its
	// counters and its change feed.
	DropInstance(ctx context.Context, inst string) error

	// Changes returns the instance's changes with Seq > after, oldest
	// first, at most limit (which must be positive): the change feed every
	// Write appends to (changes.go). When the change right after after
	// has been trimmed (Retention), it fails with an error wrapping
	// ErrHistoryGone. after 0 reads from the start; an after at or past
	// the newest change returns none.
	Changes(ctx context.Context, inst string, after uint64, limit int) ([]Change, error)
	// LastChange returns the Seq of the instance's newest change, 0 when
	// it has none: where a new reader starts.
	LastChange(ctx context.Context, inst string) (uint64, error)
	// HoldChanges keeps the instance's changes after after from being
	// trimmed until until, beyond what Retention keeps, for a reader that
	// has yet to read them (the event hooks, while an endpoint fails): a
	// Hold. One hold per instance: a call replaces the last, and a zero
	// until releases it. A hold keeps at most MaxHeld changes.
	HoldChanges(ctx context.Context, inst string, after uint64, until time.Time) error
	// Wait blocks until the instance has a change with Seq > after (made
	// through this store or, on a shared database, any process), and
	// returns LastChange; or fails with ctx's error when ctx ends first.
	// It returns at once when such a change exists already. Each store
	// documents how it learns of changes (without polling in one process).
	Wait(ctx context.Context, inst string, after uint64) (uint64, error)

	// PutDoc stores a service document (apps, releases, instances, …) of a
	// kind under a key, replacing any previous one.
	PutDoc(ctx context.Context, kind, key string, doc []byte) error
	// CreateDoc stores doc under kind and key unless a document is there
	// already, and returns the document stored now: doc, or the one that
	// was there. Processes that create the same shared state at once (a
	// secret, a token hash) all end up with one, the first written.
	CreateDoc(ctx context.Context, kind, key string, doc []byte) ([]byte, error)
	// GetDoc returns a document; ErrNotFound when absent.
	GetDoc(ctx context.Context, kind, key string) ([]byte, error)
	// ListDocs returns every document of a kind keyed by key.
	ListDocs(ctx context.Context, kind string) (map[string][]byte, error)
	// DeleteDoc removes a document; deleting a missing one is not an error.
	DeleteDoc(ctx context.Context, kind, key string) error

	// Snapshot opens a read-only view of everything the store holds, for
	// a backup or an export (snapshot.go), taken while writes go on.
	Snapshot(ctx context.Context) (Snapshot, error)
	// Load writes records as they are (ids, metadata and fields kept, no
	// clock read), for a restore or an import: a record whose id the
	// instance holds already fails with an error wrapping ErrExists, a
	// value another record holds in a declared @unique field with a
	// *FieldError. The instance's usage counts them; the change feed
	// does not (nothing of it is loaded). On the embedded store one
	// call applies atomically; on MongoDB the records of a failed call
	// that were written stay (the caller drops the instance). Records
	// of undeclared types are kept, and indexed when their type is
	// declared.
	Load(ctx context.Context, inst string, recs []*Record) error

	// Ping reports whether the store can serve (for /readyz).
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}
