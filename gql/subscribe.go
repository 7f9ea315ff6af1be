package gql

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// A subscription reads the instance's change feed (store.Store.Changes
// and Wait) from where it starts: the newest change when it opens, or the
// cursor it resumes after (the retained changes since are replayed
// first). For each change of its type (and id) it decides at that moment,
// with the code get and find use (authz.go), whether the caller may read
// the record, applies its ArcQL filter to the record after the change
// (before it for DELETED), and executes the document on the event with
// graphql.Execute: node is resolved like get, references included. The
// transports (gql/transport: SSE, WebSocket) only carry what Stream gives
// them.

// errSubscriptionTransport answers a subscription sent as a plain query.
var errSubscriptionTransport = errcode.New(errcode.BadRequest,
	"subscriptions need a streaming transport: POST /graphql with Accept: text/event-stream, or a WebSocket (graphql-transport-ws)")

// changesPage is how many changes a subscription reads from the feed at
// once.
const changesPage = 256

// Event is one event of a subscription: its cursor (the change's
// position, for resuming) and the executed document. Subscriptions that
// share their executions (feed.go) share their events: treat them as
// read-only.
type Event struct {
	Cursor string
	Result *Result
	// payload is Result encoded, once for every subscription that
	// shares the event.
	payload []byte
}

// Payload returns the event's result as JSON ({"data":…,"errors":[…]}).
func (ev Event) Payload() []byte { return ev.payload }

// Stream is a running subscription. Its events arrive on Events, which is
// closed when the subscription ends; Err then says why (nil when Close or
// Engine.CloseStreams ended it).
type Stream struct {
	events chan Event
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	err    error
}

// Events returns the channel of the subscription's events.
func (s *Stream) Events() <-chan Event { return s.events }

// Err returns why the subscription ended: a coded error (HISTORY_GONE,
// SUBSCRIPTION_LIMIT, …), or nil when it was closed. Valid once Events is
// closed.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Done returns a channel closed once the subscription has stopped (its
// last event is in Events, and Err says why).
func (s *Stream) Done() <-chan struct{} { return s.done }

// Close ends the subscription and waits until it has stopped.
func (s *Stream) Close() {
	s.cancel()
	<-s.done
}

// Subscribe starts the subscription req runs in env, which the caller's
// request opened (Engine.Open): the same guard, limits and
// authentication as queries. resume, when not empty, is a cursor that
// replaces the document's after argument (SSE's Last-Event-ID). It
// answers a Result instead of a Stream when the subscription cannot
// start (an invalid document, a refused caller, a bad filter, a cursor
// whose history is gone). ctx bounds only the start: the subscription
// runs until Close, Engine.CloseStreams or a failure ends it.
func (e *Engine) Subscribe(ctx context.Context, env Env, req Request, resume string) (_ *Stream, refused *Result) {
	s := env.Schema
	if !env.mayIntrospect() {
		defer func() {
			if refused != nil {
				s.hideSchema(refused, req.Query)
			}
		}()
	}
	doc := s.document(req.Query)
	if doc.introspects && !env.mayIntrospect() {
		status, body := errcode.Body(introspectionRefused(env))
		return nil, &Result{Status: status, Errors: body.Errors}
	}
	if len(doc.errors) > 0 {
		return nil, documentErrors(doc.errors)
	}
	if err := checkLimits(doc.ast, req.Variables, s.cfg); err != nil {
		return nil, documentErrors([]error{err})
	}
	fail := func(err error) (*Stream, *Result) {
		status, body := errcode.Body(err)
		return nil, &Result{Status: status, Errors: body.Errors}
	}
	if env.authErr != nil {
		return fail(env.authErr)
	}
	if env.Principal.Kind == auth.Anonymous {
		if err := checkAnonymous(s.model, doc.ast, req.OperationName, env.Instance); err != nil {
			return fail(err)
		}
		if err := env.admitAnonymous(); err != nil {
			return nil, errorResult(err)
		}
	}
	op := operation(doc.ast, req.OperationName)
	if op == nil || op.Operation != ast.OperationTypeSubscription {
		return nil, documentErrors([]error{errors.New("the operation is not a subscription")})
	}
	field, err := subscribeField(doc.ast, op)
	if err != nil {
		return nil, documentErrors([]error{err})
	}
	if err := checkVariables(&s.gql, doc.ast, req.OperationName, req.Variables); err != nil {
		return fail(err)
	}
	c := &call{Env: env, schema: s, log: e.log, vars: req.Variables, now: time.Now().UTC()}
	if err := requireData(c); err != nil {
		return fail(err)
	}
	args, err := subscribeArgs(s, field, req.Variables)
	if err != nil {
		return nil, documentErrors([]error{err})
	}
	sub := &subscription{engine: e, env: env, doc: doc.ast, req: req, types: args.types, id: args.id}
	if args.arcql != "" {
		q, err := bindFilter(ctx, c, args.typ, args.arcql)
		if err != nil {
			return fail(err)
		}
		if len(q.Sort) > 0 {
			return fail(errcode.New(errcode.BadFilter, "a subscription's filter cannot sort: it matches one record at a time"))
		}
		sub.filter = q.Filter
	}
	after := args.after
	if resume != "" {
		after = resume
	}
	var start uint64
	if after != "" {
		if start, err = decodeCursor(after); err != nil {
			return fail(err)
		}
		// An expired cursor fails now, before the stream opens.
		if _, err := env.Store.Changes(ctx, env.Instance.ID, start, 1); err != nil {
			return fail(feedError(err))
		}
	} else if start, err = env.Store.LastChange(ctx, env.Instance.ID); err != nil {
		return fail(storeError(err))
	}
	queue := s.cfg.SubscriptionQueue
	sub.recheck = s.cfg.SessionCheck
	sub.checked = time.Now()
	// The stream ends with Close or CloseStreams, not with the request
	// that opened it (a WebSocket's first message).
	ctx, cancel := context.WithCancel(e.subs.streams)
	st := &Stream{events: make(chan Event), cancel: cancel, done: make(chan struct{})}
	q := &eventQueue{max: queue, notify: make(chan struct{}, 1)}
	go func() {
		defer close(st.done)
		err := sub.run(ctx, start, q)
		if ctx.Err() != nil {
			err = nil // closed
		}
		st.mu.Lock()
		st.err = err
		st.mu.Unlock()
		q.close()
	}()
	go q.forward(ctx, st.events)
	return st, nil
}

// eventQueue holds a subscription's events between its reader of the
// feed and its client, at most max of them (the one on its way to the
// client included). Its memory grows with the events waiting: an idle
// subscription holds none.
type eventQueue struct {
	mu     sync.Mutex
	items  []Event
	held   bool // forward holds one, not yet taken by the client
	closed bool
	max    int
	notify chan struct{} // capacity 1: an event was pushed, or the queue closed
}

// push adds an event; false when max are waiting already.
func (q *eventQueue) push(ev Event) bool {
	q.mu.Lock()
	n := len(q.items)
	if q.held {
		n++
	}
	if n >= q.max {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, ev)
	q.mu.Unlock()
	q.wake()
	return true
}

// close says no event follows; forward sends those waiting, then closes
// its channel.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.wake()
}

func (q *eventQueue) wake() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// forward sends the queue's events to out, one at a time, until the
// queue is closed and empty or ctx ends; then it closes out.
func (q *eventQueue) forward(ctx context.Context, out chan<- Event) {
	defer close(out)
	for {
		q.mu.Lock()
		if len(q.items) == 0 {
			closed := q.closed
			q.items = nil // an idle subscription keeps no buffer
			q.mu.Unlock()
			if closed {
				return
			}
			select {
			case <-q.notify:
				continue
			case <-ctx.Done():
				return
			}
		}
		ev := q.items[0]
		q.items[0] = Event{}
		q.items = q.items[1:]
		q.held = true
		q.mu.Unlock()
		select {
		case out <- ev:
		case <-ctx.Done():
			return
		}
		q.mu.Lock()
		q.held = false
		q.mu.Unlock()
	}
}

// subscribeField returns the one root field of a subscription operation
// (GraphQL allows exactly one), which must be subscribe.
func subscribeField(doc *ast.Document, op *ast.OperationDefinition) (*ast.Field, error) {
	fields := selectedRoots(doc, op)
	if len(fields) != 1 || fields[0].Name.Value != "subscribe" {
		return nil, errors.New("a subscription selects exactly one root field: subscribe")
	}
	return fields[0], nil
}

type subscribeArgsOf struct {
	typ, arcql, id, after string
	// types are the record types watched: typ, or without it the types
	// whose CoreChange fields the selection names (Hypi's shape).
	types map[string]bool
}

// subscribeArgs reads the arguments of the subscribe field, with the
// request's variables.
func subscribeArgs(s *Schema, f *ast.Field, vars map[string]any) (subscribeArgsOf, error) {
	var a subscribeArgsOf
	for _, arg := range f.Arguments {
		var v any
		switch x := arg.Value.(type) {
		case *ast.Variable:
			v = vars[x.Name.Value]
		case *ast.EnumValue:
			v = x.Value
		case *ast.StringValue:
			v = x.Value
		default:
			return a, errors.New("subscribe: argument " + arg.Name.Value + " must be a string")
		}
		str, ok := v.(string)
		if v != nil && !ok {
			return a, errors.New("subscribe: argument " + arg.Name.Value + " must be a string")
		}
		switch arg.Name.Value {
		case "type":
			a.typ = str
		case "arcql":
			a.arcql = str
		case "id":
			a.id = str
		case "after":
			a.after = str
		}
	}
	if a.typ == "" {
		return hypiSubscribeArgs(s, f, a)
	}
	if in, ok := s.model.Interface(a.typ); ok {
		return a, errors.New("subscribe: " + a.typ + " is an interface: subscribe to its implementing types (" + strings.Join(in.Impls, ", ") + ")")
	}
	if _, ok := s.model.Type(a.typ); !ok {
		return a, errors.New("subscribe: unknown type " + strconv.Quote(a.typ))
	}
	a.types = map[string]bool{a.typ: true}
	return a, nil
}

// hypiSubscribeArgs reads a subscribe without type, Hypi's shape
// (subscribe { Author { name } }): it watches the record types whose
// fields the selection names directly. arcql needs exactly one of them.
func hypiSubscribeArgs(s *Schema, f *ast.Field, a subscribeArgsOf) (subscribeArgsOf, error) {
	a.types = map[string]bool{}
	if f.SelectionSet != nil {
		for _, sel := range f.SelectionSet.Selections {
			if fld, ok := sel.(*ast.Field); ok {
				if _, isType := s.model.Type(fld.Name.Value); isType {
					a.types[fld.Name.Value] = true
					a.typ = fld.Name.Value
				}
			}
		}
	}
	switch {
	case len(a.types) == 0:
		return a, errors.New("subscribe: name the record type, subscribe(type: Author), or select it as Hypi does, subscribe { Author { name } }")
	case len(a.types) > 1 && a.arcql != "":
		return a, errors.New("subscribe: an arcql filter applies to one record type; this selection names several")
	}
	return a, nil
}

// subscription is the state of one running subscription.
type subscription struct {
	engine *Engine
	env    Env
	doc    *ast.Document
	req    Request
	types  map[string]bool
	id     string
	filter arcql.Expr
	// recheck is how often the caller's token is checked again, checked
	// when it last was.
	recheck time.Duration
	checked time.Time
}

// run reads the feed after start, from the instance's tail (feed.go) or,
// while it is behind the tail, from the store, and sends the events the
// caller may see, until ctx ends or it fails: a change history gone (the
// reader fell behind the retention), a store failure, or a full queue
// (the client reads too slowly).
func (sub *subscription) run(ctx context.Context, last uint64, out *eventQueue) error {
	st, inst := sub.env.Store, sub.env.Instance.ID
	t, err := sub.engine.subs.acquireTail(st, inst, sub.env.Schema.cfg.SubscriptionTail)
	if err != nil {
		return feedError(err)
	}
	defer sub.engine.subs.releaseTail(t)
	g := t.join(sub.shareKey())
	defer t.leave(g)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if err := sub.checkCaller(ctx); err != nil {
			return err
		}
		entries, wake, behind, err := t.after(last, changesPage)
		if behind {
			entries, err = sub.readStore(ctx, last)
		}
		if err != nil {
			return feedError(err)
		}
		if len(entries) == 0 {
			// Wait at most until the next check of the caller.
			if timer == nil {
				timer = time.NewTimer(sub.recheck)
			} else {
				timer.Reset(sub.recheck)
			}
			select {
			case <-wake:
			case <-timer.C:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		for _, e := range entries {
			last = e.change.Seq
			ev, ok, err := sub.deliverShared(ctx, t, g, e)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if !out.push(ev) {
				return errcode.New(errcode.SubscriptionLimit,
					"the client reads too slowly: more than %d events are waiting; subscribe again (after the last cursor received) to resume", out.max)
			}
		}
	}
}

// readStore reads a page of the changes after last from the store, for a
// subscriber behind its instance's tail (a replay).
func (sub *subscription) readStore(ctx context.Context, last uint64) ([]*feedEntry, error) {
	changes, err := sub.env.Store.Changes(ctx, sub.env.Instance.ID, last, changesPage)
	if err != nil {
		return nil, err
	}
	forgetGrants(sub.env.grants, sub.env.Instance.ID, changes)
	out := make([]*feedEntry, len(changes))
	for i := range changes {
		out[i] = &feedEntry{change: changes[i]}
	}
	return out, nil
}

// checkCaller ends the subscription once its caller's token no longer
// holds (a logout, a disabled account, an expired session, a new
// instance token), checking at most every recheck. A store failure
// does not end it: the next check tries again.
func (sub *subscription) checkCaller(ctx context.Context) error {
	env := sub.env
	if env.Principal.Kind == auth.Anonymous || time.Since(sub.checked) < sub.recheck {
		return nil
	}
	sub.checked = time.Now()
	_, err := sub.engine.accounts.Authenticate(ctx, env.Store, keysOf(env.Instance), env.Token)
	if e := errcode.As(err); err != nil && e.Code == errcode.Unauthenticated {
		return errcode.Wrap(errcode.Unauthenticated, err, "the subscription's session ended (logged out, disabled or expired): log in and subscribe again")
	}
	return nil
}

// shareKey is what makes two subscriptions' events the same: the schema,
// the caller (not its token: each subscription checks its own), the
// document, the operation and the variables.
func (sub *subscription) shareKey() string {
	vars, _ := json.Marshal(sub.req.Variables) // sorted keys
	p := sub.env.Principal
	return fmt.Sprintf("%p\x00%d\x00%s\x00%s\x00%s\x00%s", sub.env.Schema, p.Kind, p.AccountID, sub.req.OperationName, vars, sub.req.Query)
}

// deliverShared is deliver, done once per change for the subscriptions of
// g while they keep up with each other.
func (sub *subscription) deliverShared(ctx context.Context, t *feedTail, g *execGroup, e *feedEntry) (Event, bool, error) {
	if ev, ok, hit := g.lookup(e.change.Seq); hit {
		return ev, ok, nil
	}
	ev, ok, err := sub.deliver(ctx, t, e)
	if err == nil && ctx.Err() == nil {
		g.keep(e.change.Seq, ev, ok)
	}
	return ev, ok, err
}

// deliver returns the event of a change for this subscription; ok is
// false when the subscription does not see it: another type or record, a
// record the caller may not read now, one the filter does not match, or
// one gone since (its DELETED follows).
func (sub *subscription) deliver(ctx context.Context, t *feedTail, e *feedEntry) (Event, bool, error) {
	ch := &e.change
	if !sub.types[ch.Type] || (sub.id != "" && ch.ID != sub.id) {
		return Event{}, false, nil
	}
	env := sub.env
	// The record is read once for all the instance's subscribers, on the
	// tail's context: one subscriber leaving does not fail the others'.
	rec, err := e.record(t.ctx, env.Store, env.Instance.ID)
	if err != nil && ctx.Err() == nil {
		return Event{}, false, feedError(err)
	}
	if rec == nil || err != nil {
		return Event{}, false, nil
	}
	// A call per event: the caller's rights as they are now, from the
	// grants finds read (access.Cache: read again after a grant is
	// written here, and once the feed shows a grant changed anywhere,
	// before the changes after it are delivered: forgetGrants).
	c := &call{Env: env, schema: env.Schema, log: sub.engine.log, vars: sub.req.Variables, now: time.Now().UTC().Truncate(time.Millisecond)}
	cctx := withCall(ctx, c)
	if !visible(cctx, c, rec) {
		return Event{}, false, nil
	}
	if sub.filter != nil {
		ok, err := sub.matches(cctx, c, rec)
		if err != nil || !ok {
			return Event{}, false, err
		}
	}
	ev := &event{change: *ch, cursor: encodeCursor(ch.Seq)}
	changed, ok := visibleChanged(cctx, c, rec, ch)
	if !ok {
		return Event{}, false, nil
	}
	ev.change.Changed = changed
	if ch.Op != store.ChangeDeleted {
		ev.node = newBatch([]*store.Record{shown(cctx, c, rec)})[0]
	}
	res := graphql.Execute(graphql.ExecuteParams{
		Schema:        env.Schema.gql,
		Root:          ev,
		AST:           sub.doc,
		OperationName: sub.req.OperationName,
		Args:          sub.req.Variables,
		Context:       cctx,
	})
	out := &Result{Data: res.Data}
	present(out, res.Errors, res.Data == nil, sub.engine.log)
	payload, err := out.MarshalJSON()
	if err != nil {
		return Event{}, false, err
	}
	return Event{Cursor: ev.cursor, Result: out, payload: payload}, true, nil
}

// visibleChanged returns the fields of a change the caller may read
// (changed): all of them on a record it owns or reads whole, only those
// its grants' fields lists cover otherwise. ok is false for an UPDATED
// whose changed fields the caller may read none of: the event is not
// delivered, since even an empty changed would tell that a hidden field
// changed. CREATED, TRASHED, UNTRASHED and DELETED are delivered with
// what they name of the visible fields: that the record came or went is
// what find shows too.
func visibleChanged(ctx context.Context, c *call, rec *store.Record, ch *store.Change) (changed []string, ok bool) {
	if owned(c, rec) || len(ch.Changed) == 0 || ruleAllows(ctx, c, rec, "read") {
		return ch.Changed, true
	}
	s, err := c.rights(ctx, rec.Type, "find")
	if err != nil {
		return nil, false // visible refused it already
	}
	only, limited := s.Fields(rec)
	if !limited {
		return ch.Changed, true
	}
	changed = make([]string, 0, len(ch.Changed))
	for _, f := range ch.Changed {
		if _, ok := only[f]; ok {
			changed = append(changed, f)
		}
	}
	if len(changed) == 0 && ch.Op == store.ChangeUpdated {
		return nil, false
	}
	return changed, true
}

// matches applies the subscription's filter to a record as the caller may
// read it: reference hops reach only records it may read (as find's), and
// a filter on a field some grant hides matches only records whose grants
// show it.
func (sub *subscription) matches(ctx context.Context, c *call, rec *store.Record) (bool, error) {
	f, err := scopeHops(ctx, c, sub.filter)
	if err != nil {
		return false, err
	}
	if hasHop(f) {
		if f, err = store.ResolveHops(ctx, c.Store, c.Instance.ID, f, c.schema.cfg.MaxHopResults); err != nil {
			return false, storeError(err)
		}
	}
	if !owned(c, rec) && !ruleAllows(ctx, c, rec, "read") {
		s, err := c.rights(ctx, rec.Type, "find")
		if err != nil {
			return false, err
		}
		if s.Limited() && !s.Restrict(namedFields(sub.filter, nil)).Allows(rec) {
			return false, nil
		}
	}
	return arcql.Match(f, rec), nil
}

// feedError is the coded error of a failed read of the change feed.
func feedError(err error) error {
	if errors.Is(err, store.ErrHistoryGone) {
		return errcode.Wrap(errcode.HistoryGone, err,
			"the change history after this cursor is gone (changes are retained for an hour and at least the last 10,000): read the records afresh and subscribe without after")
	}
	return storeError(err)
}

// cursorPrefix marks the cursors of subscriptions, so that another
// cursor (find's) is refused rather than misread.
const cursorPrefix = "chg:"

// encodeCursor returns the opaque cursor of a change.
func encodeCursor(seq uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.FormatUint(seq, 10)))
}

// decodeCursor returns the change a cursor names.
func decodeCursor(s string) (uint64, error) {
	bad := errcode.New(errcode.BadRequest, "after is not a subscription cursor: pass the cursor of an event as it was received")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, bad
	}
	n, ok := strings.CutPrefix(string(b), cursorPrefix)
	if !ok {
		return 0, bad
	}
	seq, err := strconv.ParseUint(n, 10, 64)
	if err != nil {
		return 0, bad
	}
	return seq, nil
}
