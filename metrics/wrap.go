package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/store"
)

// Store times the operations of st (core_store_operation_duration_seconds).
func (m *Metrics) Store(st store.Store) store.Store { return &timedStore{Store: st, m: m} }

type timedStore struct {
	store.Store
	m *Metrics
}

func (s *timedStore) Get(ctx context.Context, inst, typ, id string) (*store.Record, error) {
	defer s.m.observeStore("get", time.Now())
	return s.Store.Get(ctx, inst, typ, id)
}

func (s *timedStore) GetMany(ctx context.Context, inst, typ string, ids []string) (map[string]*store.Record, error) {
	defer s.m.observeStore("get_many", time.Now())
	return s.Store.GetMany(ctx, inst, typ, ids)
}

func (s *timedStore) Find(ctx context.Context, inst string, q *store.Query) ([]*store.Record, error) {
	defer s.m.observeStore("find", time.Now())
	return s.Store.Find(ctx, inst, q)
}

func (s *timedStore) Aggregate(ctx context.Context, inst string, q *store.AggQuery) ([]*store.Group, error) {
	defer s.m.observeStore("aggregate", time.Now())
	return s.Store.Aggregate(ctx, inst, q)
}

func (s *timedStore) Write(ctx context.Context, inst string, ops []store.Op, quota store.Quota) ([]store.OpResult, error) {
	defer s.m.observeStore("write", time.Now())
	return s.Store.Write(ctx, inst, ops, quota)
}

func (s *timedStore) Changes(ctx context.Context, inst string, after uint64, limit int) ([]store.Change, error) {
	defer s.m.observeStore("changes", time.Now())
	return s.Store.Changes(ctx, inst, after, limit)
}

func (s *timedStore) LastChange(ctx context.Context, inst string) (uint64, error) {
	defer s.m.observeStore("last_change", time.Now())
	return s.Store.LastChange(ctx, inst)
}

// Wait is not timed: it lasts as long as nothing changes, which says
// nothing about the store.
func (s *timedStore) Wait(ctx context.Context, inst string, after uint64) (uint64, error) {
	return s.Store.Wait(ctx, inst, after)
}

func (s *timedStore) GetDoc(ctx context.Context, kind, key string) ([]byte, error) {
	defer s.m.observeStore("get_doc", time.Now())
	return s.Store.GetDoc(ctx, kind, key)
}

func (s *timedStore) PutDoc(ctx context.Context, kind, key string, doc []byte) error {
	defer s.m.observeStore("put_doc", time.Now())
	return s.Store.PutDoc(ctx, kind, key, doc)
}

func (s *timedStore) ListDocs(ctx context.Context, kind string) (map[string][]byte, error) {
	defer s.m.observeStore("list_docs", time.Now())
	return s.Store.ListDocs(ctx, kind)
}

// Functions counts and times the calls of rt (core_function_calls_total,
// core_function_call_duration_seconds).
func (m *Metrics) Functions(rt fn.Runtime) fn.Runtime { return &timedRuntime{rt: rt, m: m} }

type timedRuntime struct {
	rt fn.Runtime
	m  *Metrics
}

func (r *timedRuntime) Invoke(ctx context.Context, inv fn.Invocation) (fn.Result, error) {
	start := time.Now()
	res, err := r.rt.Invoke(ctx, inv)
	r.m.fnDuration.Observe(time.Since(start).Seconds())
	outcome := "ok"
	switch {
	case err == nil:
	case errors.Is(err, fn.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		outcome = "timeout"
	case errors.Is(err, fn.ErrBusy):
		outcome = "busy"
	case errors.Is(err, fn.ErrResourceExhausted):
		outcome = "memory"
	default:
		outcome = "error"
	}
	r.m.fnCalls.WithLabelValues(outcome).Inc()
	return res, err
}
