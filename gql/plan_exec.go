package gql

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/gqlerrors"
)

// Running a plan. Values are completed as graphql-go's completeValue does
// (same checks, same error values, same null bubbling) and appended as JSON
// in selection order. A position is a field's value or a list item: an
// error there is recorded and the position becomes null when its type is
// nullable, and otherwise propagates to the enclosing position, whose
// partial output is cut off. Resolver and completion panics become field
// errors, as in graphql-go.

// Outcomes of completing a value.
const (
	failed    = -1 // an error propagates (executor.pending)
	wroteNull = 0
	wroteData = 1
)

// pathChunk is how many response path nodes an executor allocates at once;
// it keeps up to maxKeptChunks for the next request.
const (
	pathChunk     = 64
	maxKeptChunks = 32
)

// executor runs one plan for one request. Executors are pooled; nothing a
// request leaves in one (paths, arguments) is kept past its release.
type executor struct {
	ctx  context.Context
	pl   *plan
	vars map[string]any
	buf  []byte
	errs []gqlerrors.FormattedError
	// pending is the error propagating to the nearest nullable position.
	pending *gqlerrors.Error
	// encodeErr is a value JSON cannot carry (NaN, infinity, a channel):
	// encoding/json would fail the whole response.
	encodeErr error
	// paths holds the response path nodes of the request, in chunks kept
	// for the next request: resolvers get them in ResolveInfo.Path without
	// an allocation per field.
	paths  []graphql.ResponsePath
	chunks [][]graphql.ResponsePath
	chunk  int // the chunk paths is
	// args are the per-request arguments of fields that read variables,
	// by argSlot.
	args []map[string]any
	// root is the source of root fields: graphql-go passes an empty map.
	root map[string]any
	// c is the request's call, read from ctx by the first direct field.
	c *call
}

var executors = sync.Pool{New: func() any { return &executor{chunk: -1} }}

// execute runs the plan for a request with coerced variables and appends
// the data (an object, or null when an error reached the root) to buf. It
// returns the buffer, the errors in graphql-go's form (in the order they
// happened) and any value that JSON cannot carry.
func (pl *plan) execute(ctx context.Context, vars map[string]any, buf []byte) ([]byte, []gqlerrors.FormattedError, bool, error) {
	e := executors.Get().(*executor)
	e.ctx, e.pl, e.vars, e.buf = ctx, pl, vars, buf
	if cap(e.args) < pl.slots {
		e.args = make([]map[string]any, pl.slots)
	}
	e.args = e.args[:pl.slots]
	if e.root == nil {
		e.root = map[string]any{}
	}
	start := len(e.buf)
	ok := e.rootFields()
	if !ok {
		// A non-null root field failed: graphql-go answers no data and only
		// that error.
		e.buf = append(e.buf[:start], "null"...)
		e.errs = append(e.errs[:0], gqlerrors.FormatError(e.pending))
	}
	out, errs, encodeErr := e.buf, e.errs, e.encodeErr
	e.release()
	return out, errs, !ok, encodeErr
}

// release clears the executor and returns it to the pool.
func (e *executor) release() {
	// Path nodes are not cleared: they hold plan keys, list indexes and
	// other nodes, nothing of the request.
	if len(e.chunks) > maxKeptChunks {
		e.chunks = nil // a huge answer's paths are not kept
	}
	clear(e.args)
	if len(e.root) > 0 {
		clear(e.root)
	}
	*e = executor{chunks: e.chunks, chunk: -1, args: e.args[:0], root: e.root}
	executors.Put(e)
}

// rootFields runs the operation's root selection; false when a non-null
// root field failed.
func (e *executor) rootFields() bool {
	sel := e.pl.root
	if e.pl.order == nil {
		return e.object(sel, e.root, nil) != failed
	}
	// A mutation whose fields run in another order than they are written:
	// run each into its own segment, then write them in selection order.
	segs := make([][]byte, len(sel.fields))
	for _, i := range e.pl.order {
		start := len(e.buf)
		if !e.field(sel.fields[i], e.root, nil, true) {
			return false
		}
		segs[i] = append([]byte(nil), e.buf[start:]...)
		e.buf = e.buf[:start]
	}
	e.buf = append(e.buf, '{')
	for i, s := range segs {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = append(e.buf, s...)
	}
	e.buf = append(e.buf, '}')
	return true
}

// path returns a response path node from the request's chunks.
func (e *executor) path(prev *graphql.ResponsePath, key any) *graphql.ResponsePath {
	if len(e.paths) == cap(e.paths) {
		e.chunk++
		if e.chunk == len(e.chunks) {
			e.chunks = append(e.chunks, make([]graphql.ResponsePath, pathChunk))
		}
		e.paths = e.chunks[e.chunk][:0]
	}
	e.paths = append(e.paths, graphql.ResponsePath{Prev: prev, Key: key})
	return &e.paths[len(e.paths)-1]
}

// argsOf returns a field's arguments.
func (e *executor) argsOf(f *fieldPlan) map[string]any {
	if f.argSlot < 0 {
		return f.args
	}
	if m := e.args[f.argSlot]; m != nil {
		return m
	}
	m := argumentValues(f.def.Args, f.asts[0].Arguments, e.vars)
	e.args[f.argSlot] = m
	return m
}

// object appends the fields of a selection for one source value.
func (e *executor) object(s *selPlan, src any, path *graphql.ResponsePath) int {
	e.buf = append(e.buf, '{')
	for i, f := range s.fields {
		if !e.field(f, src, path, i == 0) {
			return failed
		}
	}
	e.buf = append(e.buf, '}')
	return wroteData
}

// field appends one response key and its value; false when an error
// propagates to the object.
func (e *executor) field(f *fieldPlan, src any, parent *graphql.ResponsePath, first bool) bool {
	if first {
		e.buf = append(e.buf, f.prefix...)
	} else {
		e.buf = append(e.buf, f.prefixComma...)
	}
	if f.typename != "" {
		e.buf = appendString(e.buf, f.typename)
		return true
	}
	start := len(e.buf)
	if f.direct != nil {
		if r, ok := e.direct(f, src, parent); ok {
			return r != failed || e.caught(f.typ, start)
		}
	}
	if e.resolve(f, src, e.path(parent, f.keyAny)) != failed {
		return true
	}
	return e.caught(f.typ, start)
}

// caught handles an error at a position of type t whose output began at
// start: recorded, and null written, when t is nullable; false (propagate)
// otherwise.
func (e *executor) caught(t *typePlan, start int) bool {
	if t.kind == kindNonNull {
		return false
	}
	e.errs = append(e.errs, gqlerrors.FormatError(e.pending))
	e.pending = nil
	e.buf = append(e.buf[:start], "null"...)
	return true
}

// fail sets the propagating error, located at a position as graphql-go
// locates it (the field's nodes, the position's path).
func (e *executor) fail(f *fieldPlan, path *graphql.ResponsePath, cause any) int {
	e.pending = graphql.NewLocatedErrorWithPath(cause, f.nodes, path.AsArray())
	return failed
}

// resolve calls a field's resolver and completes its value.
func (e *executor) resolve(f *fieldPlan, src any, path *graphql.ResponsePath) (r int) {
	info := graphql.ResolveInfo{
		FieldName:      f.name,
		FieldASTs:      f.asts,
		Path:           path,
		ReturnType:     f.def.Type,
		ParentType:     f.parent,
		Schema:         *e.pl.op.schema,
		Fragments:      e.pl.op.defs,
		Operation:      e.pl.op.op,
		VariableValues: e.vars,
	}
	defer func() {
		if x := recover(); x != nil {
			r = e.fail(f, path, x)
		}
	}()
	v, err := f.resolve(graphql.ResolveParams{Source: src, Args: e.argsOf(f), Info: info, Context: e.ctx})
	if err != nil {
		return e.fail(f, path, err)
	}
	return e.value(f, f.typ, &info, path, v)
}

// item completes one list item, a position of its own.
func (e *executor) item(f *fieldPlan, t *typePlan, info *graphql.ResolveInfo, path *graphql.ResponsePath, v any) int {
	start := len(e.buf)
	r := e.tryItem(f, t, info, path, v)
	if r != failed {
		return r
	}
	if !e.caught(t, start) {
		return failed
	}
	return wroteNull
}

func (e *executor) tryItem(f *fieldPlan, t *typePlan, info *graphql.ResolveInfo, path *graphql.ResponsePath, v any) (r int) {
	defer func() {
		if x := recover(); x != nil {
			r = e.fail(f, path, x)
		}
	}()
	return e.value(f, t, info, path, v)
}

// value completes a resolved value at a position: a thunk is called first
// (graphql-go calls it later, breadth first; the value is the same).
func (e *executor) value(f *fieldPlan, t *typePlan, info *graphql.ResolveInfo, path *graphql.ResponsePath, v any) int {
	for {
		switch x := v.(type) {
		case nil, string, bool, int, int64, float64, []any, map[string]any, *node, *meta, *page, edge:
			return e.complete(f, t, info, path, v)
		case func() (any, error):
			res, err := x()
			if err != nil {
				return e.fail(f, path, gqlerrors.FormatError(err))
			}
			v = res
			continue
		}
		if reflect.TypeOf(v).Kind() == reflect.Func {
			return e.fail(f, path, gqlerrors.NewFormattedError("Error resolving func. Expected `func() (interface{}, error)` signature"))
		}
		return e.complete(f, t, info, path, v)
	}
}

// complete appends a value of type t.
func (e *executor) complete(f *fieldPlan, t *typePlan, info *graphql.ResolveInfo, path *graphql.ResponsePath, v any) int {
	if t.kind == kindNonNull {
		r := e.complete(f, t.of, info, path, v)
		if r == wroteNull {
			inner := gqlerrors.FormatError(graphql.NewLocatedErrorWithPath(f.nonNullMsg, f.nodes, path.AsArray()))
			return e.fail(f, path, inner)
		}
		return r
	}
	if nullish(v) {
		e.buf = append(e.buf, "null"...)
		return wroteNull
	}
	switch t.kind {
	case kindScalar:
		return e.scalar(t, v)
	case kindEnum:
		return e.leaf(t.enum.Serialize(v))
	case kindList:
		return e.list(f, t, info, path, v)
	case kindObject:
		o := t.object.typ
		if o.IsTypeOf != nil && !o.IsTypeOf(graphql.IsTypeOfParams{Value: v, Info: *info, Context: e.ctx}) {
			return e.fail(f, path, gqlerrors.NewFormattedError(fmt.Sprintf(`Expected value of type "%v" but got: %T.`, o, v)))
		}
		return e.object(t.object, v, path)
	case kindAbstract:
		return e.abstract(f, t, info, path, v)
	}
	return e.fail(f, path, gqlerrors.NewFormattedError(fmt.Sprintf(`Cannot complete value of unexpected type "%v."`, t.out)))
}

// scalar appends a scalar; the built-in scalars' usual Go types are
// written directly (their Serialize would return them unchanged).
func (e *executor) scalar(t *typePlan, v any) int {
	if b, ok := appendFast(e.buf, t.fast, v); ok {
		e.buf = b
		return wroteData
	}
	if x, ok := v.(float64); ok && t.fast == fastFloat && x == x {
		return e.leaf(v) // an infinity: leaf records the error
	}
	return e.leaf(t.scalar.Serialize(v))
}

// appendFast appends a built-in scalar's value of its usual Go type, as
// its Serialize would return it; false for anything else (and for a float
// JSON cannot carry).
func appendFast(buf []byte, fast int, v any) ([]byte, bool) {
	switch fast {
	case fastString:
		if s, ok := v.(string); ok {
			return appendString(buf, s), true
		}
	case fastInt:
		switch x := v.(type) {
		case int64:
			if x >= -1<<31 && x <= 1<<31-1 {
				return appendInt(buf, x), true
			}
		case int:
			if x >= -1<<31 && x <= 1<<31-1 {
				return appendInt(buf, int64(x)), true
			}
		}
	case fastFloat:
		if x, ok := v.(float64); ok && x == x {
			if b, err := appendFloat(buf, x, 64); err == nil {
				return b, true
			}
		}
	case fastBoolean:
		if x, ok := v.(bool); ok {
			return appendBool(buf, x), true
		}
	}
	return buf, false
}

// leaf appends a serialized leaf value, null when it is nullish.
func (e *executor) leaf(v any) int {
	if nullish(v) {
		e.buf = append(e.buf, "null"...)
		return wroteNull
	}
	b, err := appendValue(e.buf, v)
	if err != nil {
		if e.encodeErr == nil {
			e.encodeErr = err
		}
		e.buf = append(e.buf, "null"...)
		return wroteData
	}
	e.buf = b
	return wroteData
}

// list appends a list, each item a position.
func (e *executor) list(f *fieldPlan, t *typePlan, info *graphql.ResolveInfo, path *graphql.ResponsePath, v any) int {
	if items, ok := v.([]any); ok {
		e.buf = append(e.buf, '[')
		for i, item := range items {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if e.item(f, t.of, info, e.path(path, i), item) == failed {
				return failed
			}
		}
		e.buf = append(e.buf, ']')
		return wroteData
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Ptr {
		rv = rv.Elem()
	}
	if !rv.IsValid() || !iterable(v) {
		return e.fail(f, path, gqlerrors.NewFormattedError(f.iterMsg))
	}
	e.buf = append(e.buf, '[')
	for i := 0; i < rv.Len(); i++ {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if e.item(f, t.of, info, e.path(path, i), rv.Index(i).Interface()) == failed {
			return failed
		}
	}
	e.buf = append(e.buf, ']')
	return wroteData
}

// iterable is graphql-go's isIterable: a slice or an array, or a pointer
// to one.
func iterable(v any) bool {
	t := reflect.TypeOf(v)
	if t == nil {
		return false
	}
	if t.Kind() == reflect.Ptr {
		t = t.Elem()
	}
	return t.Kind() == reflect.Slice || t.Kind() == reflect.Array
}

// abstract completes a union or interface value for its runtime type.
func (e *executor) abstract(f *fieldPlan, t *typePlan, info *graphql.ResolveInfo, path *graphql.ResponsePath, v any) int {
	var rt *graphql.Object
	switch {
	case t.union != nil && t.union.ResolveType != nil:
		rt = t.union.ResolveType(graphql.ResolveTypeParams{Value: v, Info: *info, Context: e.ctx})
	case t.iface != nil && t.iface.ResolveType != nil:
		rt = t.iface.ResolveType(graphql.ResolveTypeParams{Value: v, Info: *info, Context: e.ctx})
	default:
		for _, o := range t.possible {
			if o.IsTypeOf != nil && o.IsTypeOf(graphql.IsTypeOfParams{Value: v, Info: *info, Context: e.ctx}) {
				rt = o
				break
			}
		}
	}
	if rt == nil {
		return e.fail(f, path, gqlerrors.NewFormattedError(fmt.Sprintf(`Abstract type %v must resolve to an Object type at runtime `+
			`for field %v.%v with value "%v", received "%v".`, t.abstract(), info.ParentType, info.FieldName, v, rt)))
	}
	sel, ok := t.members[rt]
	if !ok {
		for o, s := range t.members {
			if o.Name() == rt.Name() {
				sel, ok = s, true
			}
		}
	}
	if !ok {
		return e.fail(f, path, gqlerrors.NewFormattedError(fmt.Sprintf(`Runtime Object type "%v" is not a possible type `+
			`for "%v".`, rt, t.abstract())))
	}
	if rt.IsTypeOf != nil && !rt.IsTypeOf(graphql.IsTypeOfParams{Value: v, Info: *info, Context: e.ctx}) {
		return e.fail(f, path, gqlerrors.NewFormattedError(fmt.Sprintf(`Expected value of type "%v" but got: %T.`, rt, v)))
	}
	return e.object(sel, v, path)
}
