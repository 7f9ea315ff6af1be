package gql

import (
	"time"

	"github.com/graphql-go/graphql"
)

// Direct fields. Most leaves of an answer are a record's stored field or
// a piece of its metadata: a pure read of the source, never an error.
// The builder registers such fields with a directFn that reads the value
// as the resolver would, and the plan appends that value at once when the
// executor can write it without graphql-go's help: a null on a nullable
// position, or a String, Int, Float or Boolean of its usual Go type. The
// resolver is then not called through ResolveParams (no ResolveInfo, no
// response path, no deferred recover for the field). Anything else — a
// null on a non-null position, a value that needs the scalar's Serialize,
// an enum, a list — takes the resolver's path as before, so the output and
// the errors are the same either way (the differential tests run every
// document through both executors). An object (a record's `core`) is
// completed at once from the value read, as the resolver's value would be:
// what the executor saves is the resolver call around it.

// directFn reads a direct field's value from its source; ok is false when
// the source is not what the field expects (the resolver's path then
// reports it). A *time.Time stands for the timestamp the resolver formats
// with formatTime, a *string for the string it points to.
type directFn func(c *call, src any) (v any, ok bool)

// directFields are a schema's direct fields by "Type.field".
type directFields map[string]directFn

func (d directFields) add(typ, field string, fn directFn) { d[typ+"."+field] = fn }

// lookup returns the directFn of a field, nil when it has none.
func (d directFields) lookup(typ, field string) directFn {
	if d == nil {
		return nil
	}
	return d[typ+"."+field]
}

// direct appends a direct field's value when the executor can write it
// itself: ok reports whether it did, and r is the outcome (failed when an
// object's completion failed: the error propagates as from the resolver's
// path).
func (e *executor) direct(f *fieldPlan, src any, parent *graphql.ResponsePath) (r int, ok bool) {
	if e.c == nil {
		e.c = callFrom(e.ctx)
	}
	v, ok := f.direct(e.c, src)
	if !ok {
		return 0, false
	}
	t := f.typ
	if t.kind == kindNonNull {
		if nullish(v) {
			return 0, false // the resolver's path words the error
		}
		t = t.of
	} else if nullish(v) {
		e.buf = append(e.buf, "null"...)
		return wroteNull, true
	}
	switch {
	case t.kind == kindObject && t.object.typ.IsTypeOf == nil:
		return e.object(t.object, v, e.path(parent, f.keyAny)), true
	case t.kind != kindScalar:
		return 0, false
	}
	switch x := v.(type) {
	case *time.Time: // a timestamp, as formatTime writes it
		if t.fast != fastString {
			return 0, false
		}
		e.buf = append(appendTime(append(e.buf, '"'), *x), '"')
		return wroteData, true
	case *string: // a string in the source, not boxed
		if t.fast != fastString {
			return 0, false
		}
		e.buf = appendString(e.buf, *x)
		return wroteData, true
	}
	b, ok := appendFast(e.buf, t.fast, v)
	if ok {
		e.buf = b
	}
	return wroteData, ok
}
