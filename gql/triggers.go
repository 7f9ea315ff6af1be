package gql

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/fn"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
)

// Triggers (@trigger(config: {before, after}) on a record type or a
// Mutation field bound to a function). What the issue leaves open,
// decided here:
//   - On a record type, the trigger runs around every upsert that writes
//     records of the type (nested ones too), once per upsert request; its
//     fields receive the upsert's argument values (as the field declares
//     it, e.g. values: Json). On a Mutation field, around every call of
//     the field, with its arguments.
//   - before is called as the caller, under the caller's rights, before
//     anything is written: false, null, an error or a time-out refuses the
//     write (TRIGGER_REFUSED, naming the trigger's field); true lets it
//     through.
//   - after is called once the write is committed, in the background, as
//     the caller, with the same arguments and coreResult (the records of
//     the type written, each with core.id, or the field's answer): it
//     never changes the write's answer. A failed call is written to the
//     instance's function log and tried again up to afterAttempts times
//     in all, afterBackoff doubling between them. At most cap(afterSlots)
//     run at once in a process; a write waits for a free one.
//   - A trigger's own writes (through core.graphql) fire triggers again
//     up to maxTriggerDepth levels of triggers; deeper writes fire none.

// maxTriggerDepth is how many levels of triggers a write fires: the
// writes of a trigger's function at that depth fire no trigger.
const maxTriggerDepth = 3

// afterAttempts bounds the calls of an after trigger; afterBackoff is the
// wait after the first failure, doubling after each.
const (
	afterAttempts = 3
	afterBackoff  = time.Second
)

// afterSlots bounds the after triggers under way in the process: a write
// whose after trigger finds none free waits for one before it answers
// (its write is committed already), so a burst of writes cannot pile up
// goroutines without bound.
var afterSlots = make(chan struct{}, 64)

// rootCallDocument returns the document that calls the root field f of
// opType (Query or Mutation) with those of given that f declares as
// arguments, and the variables it needs.
func rootCallDocument(opType string, f *schema.Field, given map[string]any) (string, map[string]any) {
	var defs, args []string
	vars := map[string]any{}
	for _, a := range f.Args {
		v, ok := given[a.Name]
		if !ok {
			continue
		}
		defs = append(defs, "$"+a.Name+": "+a.SDLType())
		args = append(args, a.Name+": $"+a.Name)
		vars[a.Name] = v
	}
	doc := strings.ToLower(opType)
	if len(defs) > 0 {
		doc += "(" + strings.Join(defs, ", ") + ")"
	}
	doc += " { run: " + f.Name
	if len(args) > 0 {
		doc += "(" + strings.Join(args, ", ") + ")"
	}
	if f.Kind == schema.KindRef || f.Kind == schema.KindObject {
		doc += " { __typename }"
	}
	return doc + " }", vars
}

// callRoot runs the root field ref names in env, one trigger level
// deeper, and returns its answer or why it failed.
func callRoot(ctx context.Context, s *Schema, env Env, log *zap.Logger, ref *schema.TriggerRef, args map[string]any) (any, error) {
	f := s.model.RootField(ref.Type, ref.Field)
	if f == nil {
		return nil, fmt.Errorf("%s.%s is not a field of the schema", ref.Type, ref.Field)
	}
	doc, vars := rootCallDocument(ref.Type, f, args)
	env.triggerDepth++
	env.functionErr = nil
	env.limiter = nil // part of a request admitted already
	res := s.Do(ctx, env, log, Request{Query: doc, Variables: vars})
	if len(res.Errors) > 0 {
		first := res.Errors[0]
		if code, _ := first.Extensions["code"].(string); code != "" {
			return nil, fmt.Errorf("%s: %s", code, first.Message)
		}
		return nil, errors.New(first.Message)
	}
	data, _ := res.Data.(map[string]any)
	return data["run"], nil
}

// triggerName names a trigger's field in messages.
func triggerName(ref *schema.TriggerRef) string { return ref.Type + "." + ref.Field }

// runBefore calls a before trigger: nil when it answered true (or there
// is none to call), else the refusal.
func (c *call) runBefore(ctx context.Context, tr *schema.Trigger, args map[string]any) error {
	if tr == nil || tr.Before == nil || c.triggerDepth >= maxTriggerDepth {
		return nil
	}
	name := triggerName(tr.Before)
	v, err := callRoot(ctx, c.schema, c.Env, c.log, tr.Before, args)
	refused := &errcode.Error{Code: errcode.TriggerRefused, Extensions: map[string]any{"trigger": name}, Err: err}
	switch {
	case err != nil:
		refused.Message = fmt.Sprintf("the before trigger %s of %s failed, so nothing was written: %v", name, tr.Subject, err)
	case v != true:
		refused.Message = fmt.Sprintf("the before trigger %s of %s refused the write (it answered %v); nothing was written", name, tr.Subject, describe(v))
	default:
		return nil
	}
	return refused
}

// startAfter calls an after trigger in the background with args and
// coreResult, trying again on failure (afterAttempts); each failure goes
// to the instance's function log.
func (c *call) startAfter(ctx context.Context, tr *schema.Trigger, args map[string]any, result any) {
	if tr == nil || tr.After == nil || c.triggerDepth >= maxTriggerDepth {
		return
	}
	args = maps.Clone(args)
	args["coreResult"] = result
	s, env, log, ref := c.schema, c.Env, c.log, tr.After
	note := func(format string, a ...any) {
		if env.functionLog != nil {
			env.functionLog.Append(env.Instance.ID, []fn.LogEntry{{Time: time.Now().UTC(), Level: "runtime", Function: triggerName(ref),
				Call: store.NewID(), Message: "after trigger of " + tr.Subject + ": " + fmt.Sprintf(format, a...)}})
		}
	}
	select {
	case afterSlots <- struct{}{}:
	case <-ctx.Done():
		note("not called: the request ended while the process ran %d after triggers already", cap(afterSlots))
		return
	}
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer func() { <-afterSlots }()
		wait := afterBackoff
		for attempt := 1; ; attempt++ {
			_, err := callRoot(ctx, s, env, log, ref, args)
			if err == nil {
				return
			}
			note("attempt %d of %d failed: %v", attempt, afterAttempts, err)
			if attempt == afterAttempts {
				return
			}
			time.Sleep(wait)
			wait *= 2
		}
	}()
}

// upsertTriggers calls the before triggers of the record types an upsert
// writes (once each); it returns the triggers whose after is to run once
// the upsert is committed.
func (u *upserter) upsertTriggers(ctx context.Context, args map[string]any) ([]*schema.Trigger, error) {
	var trs []*schema.Trigger
	seen := map[string]bool{}
	for _, op := range u.ops {
		if op.Kind != store.OpUpsert || seen[op.Type] {
			continue
		}
		seen[op.Type] = true
		t, ok := u.c.schema.model.Type(op.Type)
		if !ok || t.Trigger == nil {
			continue
		}
		if err := u.c.runBefore(ctx, t.Trigger, args); err != nil {
			return nil, err
		}
		trs = append(trs, t.Trigger)
	}
	return trs, nil
}

// startUpsertAfters starts the after triggers of an upsert's record
// types, each with the records of its type written (coreResult).
func (u *upserter) startUpsertAfters(ctx context.Context, trs []*schema.Trigger, args map[string]any, results []store.OpResult) {
	for _, tr := range trs {
		var written []any
		for i, op := range u.ops {
			t, _ := u.c.schema.model.Type(op.Type)
			if op.Kind != store.OpUpsert || t == nil || t.Trigger != tr || results[i].Record == nil {
				continue
			}
			rec := maps.Clone(results[i].Record.Fields)
			for _, f := range t.Fields {
				if f.Hidden {
					delete(rec, f.Name)
				}
			}
			rec["core"] = map[string]any{"id": results[i].Record.ID, "type": op.Type, "created": results[i].Created}
			written = append(written, rec)
		}
		u.c.startAfter(ctx, tr, args, written)
	}
}
