package gql

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schedule"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
	"github.com/corehq/core/tenant"
)

// The ScheduledFunction records (package schedule runs them): what an
// upsert checks of one, the nextExecution it computes, and the call of a
// tick through the same path as a GraphQL call of the field.

// scheduleFields are the fields whose change moves nextExecution.
var scheduleFields = []string{"fn", "start", "end", "repeats", "interval", "intervalFrequency"}

// checkSchedule refuses a ScheduledFunction input that cannot run, and
// sets its nextExecution when the schedule changes.
func (u *upserter) checkSchedule(ctx context.Context, obj, set map[string]any, id, path string) error {
	for _, name := range schedule.ServiceFields {
		if _, ok := obj[name]; ok {
			return errcode.New(errcode.BadRequest, "%s.%s: written by the service only", path, name)
		}
	}
	old, err := u.c.Store.Get(ctx, u.c.Instance.ID, schedule.Type, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		old = nil
		if err := u.roomFor(ctx, schedule.Type, schedule.MaxSchedules, "scheduled functions", path); err != nil {
			return err
		}
	case err != nil:
		return storeError(err)
	}
	changed := old == nil
	merged := map[string]any{}
	var created time.Time
	if old != nil {
		for k, v := range old.Fields {
			merged[k] = v
		}
		created = old.Created
	} else {
		created = u.c.now
		if _, ok := set["start"]; !ok {
			set["start"] = schedule.FormatTime(created) // the grid's origin, kept
		}
	}
	for k, v := range set {
		merged[k] = v
	}
	for _, name := range scheduleFields {
		if _, ok := obj[name]; ok {
			changed = true
		}
	}
	sch, err := schedule.FromFields(id, merged, created)
	if err != nil {
		return errcode.New(errcode.BadRequest, "%s.%v", path, err)
	}
	if _, err := scheduledField(u.c.schema.model, sch); err != nil {
		return errcode.New(errcode.BadRequest, "%s.fn: %v", path, err)
	}
	if !sch.End.IsZero() && sch.End.Before(sch.Start) {
		return errcode.New(errcode.BadRequest, "%s.end: before start", path)
	}
	if typ, _ := merged["type"].(string); typ != "" {
		if _, ok := u.c.schema.model.Type(typ); !ok {
			return errcode.New(errcode.BadRequest, "%s.type: %q is not a record type of the schema", path, typ)
		}
		if text, _ := merged["arcql"].(string); text != "" {
			q, err := arcql.Parse(text, arcql.DefaultLimits())
			if err == nil {
				_, err = arcql.Bind(q, u.c.schema.model, typ, u.c.Instance.ID)
			}
			if err != nil {
				return errcode.New(errcode.BadRequest, "%s.arcql: %v", path, err)
			}
		}
	}
	if changed {
		next := sch.After(u.c.now, true)
		if next.IsZero() {
			set["nextExecution"] = nil
		} else {
			set["nextExecution"] = schedule.FormatTime(next)
		}
	}
	return nil
}

// notedSchedules tells the scheduler of an instance with schedules.
func (u *upserter) notedSchedules(ctx context.Context) error {
	for _, op := range u.ops {
		if op.Type == schedule.Type {
			if err := schedule.Noted(ctx, u.c.Store, u.c.Instance.ID); err != nil {
				return storeError(fmt.Errorf("noting the scheduled functions: %w", err))
			}
			return nil
		}
	}
	return nil
}

// scheduledField returns the root field a schedule calls: a Query or
// Mutation field bound to a function.
func scheduledField(m *schema.Model, sch *schedule.Schedule) (*schema.Field, error) {
	if sch.OpType != "Query" && sch.OpType != "Mutation" {
		return nil, fmt.Errorf("type %q: a schedule calls a Query or a Mutation field", sch.OpType)
	}
	f := m.RootField(sch.OpType, sch.Field)
	switch {
	case f == nil:
		return nil, fmt.Errorf("%s.%s is not a field of the schema", sch.OpType, sch.Field)
	case f.Fn == nil:
		return nil, fmt.Errorf("%s.%s is not bound to a function (@fn)", sch.OpType, sch.Field)
	}
	return f, nil
}

// scheduledDocument returns the document that calls a schedule's field
// with the arguments id, arcql and type it declares, and their values.
func scheduledDocument(m *schema.Model, sch *schedule.Schedule) (string, map[string]any, error) {
	f, err := scheduledField(m, sch)
	if err != nil {
		return "", nil, err
	}
	doc, vars := rootCallDocument(sch.OpType, f, sch.Args)
	return doc, vars, nil
}

// scheduledSession is how long the session of a scheduled run lasts (the
// function may call back with it while it runs).
const scheduledSession = 10 * time.Minute

// RunScheduled calls the field a schedule names, as the instance's admin
// account, through the path of a GraphQL call of the field (the function
// quota, limits and log apply); it answers why the run failed, nil when
// it succeeded.
func (e *Engine) RunScheduled(ctx context.Context, inst *tenant.Instance, sch *schedule.Schedule) error {
	env := e.env(inst, auth.Principal{}, "")
	var err error
	if env.Schema, err = e.Schema(env.Release); err != nil {
		return err
	}
	doc, vars, err := scheduledDocument(env.Schema.Model(), sch)
	if err != nil {
		return err
	}
	env.Principal, env.Token, err = e.accounts.SessionAs(ctx, e.store, keysOf(inst), inst.AdminAccountID, scheduledSession)
	if err != nil {
		return fmt.Errorf("the instance's admin account may not act: %w", err)
	}
	var fnErr error
	env.functionErr = &fnErr
	res := e.Do(ctx, env, Request{Query: doc, Variables: vars})
	if len(res.Errors) > 0 {
		first := res.Errors[0]
		if code, _ := first.Extensions["code"].(string); code != "" {
			return fmt.Errorf("%s: %s", code, first.Message)
		}
		return errors.New(first.Message)
	}
	return nil
}

// roomFor refuses a new record of typ in an instance that holds max of
// them already, trashed ones too (the services that run them take the
// first max: a record past them would be kept and never run); what names
// them in the error.
func (u *upserter) roomFor(ctx context.Context, typ string, max int, what, path string) error {
	n, err := u.c.Store.Find(ctx, u.c.Instance.ID, &store.Query{Type: typ, IDsOnly: true, IncludeTrashed: true, Limit: max})
	if err != nil {
		return storeError(err)
	}
	if len(n) >= max {
		return errcode.New(errcode.BadRequest, "%s: the instance has %d %s, as many as it may have", path, max, what)
	}
	return nil
}
