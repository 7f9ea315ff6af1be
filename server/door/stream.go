package door

import (
	"context"
	"net/http"
)

type streamCtxKey struct{}

// WithStreamContext returns ctx, a request's context that the server
// bounds by its request time-out, knowing the request's context before
// that bound: an event stream runs on the latter, so that it ends when
// its client goes away, not when the time-out a query has passes. A
// request that is no stream keeps its time-out.
func WithStreamContext(ctx, unbounded context.Context) context.Context {
	return context.WithValue(ctx, streamCtxKey{}, unbounded)
}

// StreamContext returns the context an event stream of a request runs
// on: the one WithStreamContext recorded, else the request's own.
func StreamContext(r *http.Request) context.Context {
	if ctx, ok := r.Context().Value(streamCtxKey{}).(context.Context); ok {
		return ctx
	}
	return r.Context()
}
