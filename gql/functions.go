package gql

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/fn"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
)

// callFunction runs the function a root field is bound to (@fn) with the
// field's arguments and answers its result. Input-object arguments reach
// the function as their JSON text, so that JSON.parse(input.args.payload)
// works; the function may call back into this instance's GraphQL API as
// the caller (core.graphql).
func callFunction(p graphql.ResolveParams, f *schema.Field, m *schema.Model) (any, error) {
	c := callFrom(p.Context)
	if f.Fn == nil {
		return nil, errcode.New(errcode.NotFound, "field %s has no @fn binding, so there is nothing to run", f.Name)
	}
	if c.Functions == nil {
		return nil, errcode.New(errcode.Unavailable, "functions are not enabled on this server")
	}
	args := make(map[string]any, len(f.Args))
	given := make(map[string]any, len(f.Args)) // as sent: a trigger's arguments
	for _, a := range f.Args {
		v, present := rawArgument(p, a.Name)
		if !present {
			continue
		}
		given[a.Name] = v
		if _, isInput := m.Input(a.Type); isInput && v != nil {
			text, err := marshalText(v)
			if err != nil {
				return nil, errcode.New(errcode.BadRequest, "argument %s: %v", a.Name, err)
			}
			v = string(text)
		}
		args[a.Name] = v
	}
	env := c.Env
	env.functionErr = nil // the calls a function makes back are not the request's own
	env.limiter = nil     // they are part of a request admitted already, as a caller with a token's are
	inv := fn.Invocation{
		App:           c.Instance.App,
		Name:          f.Fn.Name,
		Version:       f.Fn.Version,
		Args:          args,
		Env:           c.Instance.Settings.Env,
		EnvNames:      f.Fn.Env,
		Caller:        fn.Caller{AccountID: c.Principal.AccountID, InstanceID: c.Instance.ID, Domain: c.Instance.Domain, Token: c.Token},
		Fetch:         fn.FetchPolicy{Enabled: c.Instance.Settings.Fetch.Enabled, AllowHosts: c.Instance.Settings.Fetch.AllowHosts},
		MaxConcurrent: c.Instance.Settings.FunctionConcurrency,
		Memory:        c.Instance.Settings.FunctionMemory,
		GraphQL: func(ctx context.Context, query string, vars map[string]any) ([]byte, error) {
			// Run leaves the answer encoded: no decode and re-encode.
			res := c.schema.Run(ctx, env, c.log, Request{Query: query, Variables: vars})
			defer res.Release()
			body, err := res.Body()
			return bytes.Clone(body), err
		},
	}
	if err := c.runBefore(p.Context, f.Trigger, given); err != nil {
		return nil, err
	}
	if c.meter != nil {
		if err := c.meter.AdmitCall(p.Context, c.Instance); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	res, err := c.Functions.Invoke(p.Context, inv)
	if c.meter != nil {
		c.meter.CallDone(c.Instance.ID, time.Since(start))
	}
	if err != nil {
		if c.functionErr != nil && *c.functionErr == nil {
			*c.functionErr = err
		}
		return nil, functionError(err)
	}
	c.startAfter(p.Context, f.Trigger, given, res.Value)
	return functionValue(f, m, res.Value)
}

// marshalText encodes an input object argument as the JSON text a
// function receives, without escaping <, > and & (the text is never
// HTML): a webhook's XML or HTML body keeps its size instead of growing
// sixfold against the function's input bound.
func marshalText(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// rawArgument returns an argument as sent and whether it was given.
func rawArgument(p graphql.ResolveParams, name string) (any, bool) {
	for _, a := range p.Info.FieldASTs[0].Arguments {
		if a.Name.Value == name {
			return rawArg(p, name), true
		}
	}
	v, ok := p.Args[name] // a declared default
	return v, ok
}

// functionError turns a runtime error into what the client sees: the
// function's own {code, message}, or a generic message (the details are
// in the instance's function log).
func functionError(err error) error {
	var fe *fn.FuncError
	var np *fn.NotPublishedError
	var le *fn.LimitError
	switch {
	case errors.As(err, &fe):
		return &errcode.Error{Code: errcode.Code(fe.Code), Message: fe.Message, Err: err}
	case errors.As(err, &np):
		return errcode.Wrap(errcode.NotFound, err, "%s", np.Error())
	case errors.Is(err, fn.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return errcode.Wrap(errcode.Timeout, err, "the function timed out")
	case errors.As(err, &le):
		return errcode.Wrap(errcode.BadGateway, err, "%s", le.Error())
	case errors.Is(err, fn.ErrResourceExhausted):
		return errcode.Wrap(errcode.FunctionResourceExhausted, err, "%s", err.Error())
	case errors.Is(err, fn.ErrShareBusy):
		return errcode.Wrap(errcode.Unavailable, err, "the instance runs as many function calls at once as its share (setting functionConcurrency) allows; try again")
	case errors.Is(err, fn.ErrBusy), errors.Is(err, fn.ErrClosed):
		return errcode.Wrap(errcode.Unavailable, err, "too many function calls are running; try again")
	case errors.Is(err, fn.ErrTooDeep):
		return errcode.Wrap(errcode.BadRequest, err, "functions call each other too deep")
	}
	return errcode.Wrap(errcode.BadGateway, err, "the function failed; the instance's function log has the details")
}

// functionValue shapes a function's JSON result for the field's type:
// objects of a record type become records (so their fields and core
// resolve as usual); everything else is served as is.
func functionValue(f *schema.Field, m *schema.Model, v any) (any, error) {
	if f.Type == "WebhookResponse" && !f.List {
		if err := CheckWebhookResponse(v); err != nil {
			return nil, errcode.Wrap(errcode.BadGateway, err, "%s", err)
		}
	}
	if f.Kind != schema.KindRef || v == nil {
		return v, nil
	}
	toRecord := func(e any) *store.Record {
		obj, _ := e.(map[string]any)
		if obj == nil {
			return nil
		}
		r := &store.Record{Type: f.Type, Fields: obj}
		if core, ok := obj["core"].(map[string]any); ok {
			r.ID, _ = core["id"].(string)
		}
		return r
	}
	if f.List {
		list, _ := v.([]any)
		recs := make([]*store.Record, 0, len(list))
		for _, e := range list {
			if r := toRecord(e); r != nil {
				recs = append(recs, r)
			}
		}
		out := make([]any, 0, len(recs))
		for _, n := range newBatch(recs) {
			out = append(out, n)
		}
		return out, nil
	}
	r := toRecord(v)
	if r == nil {
		return nil, errcode.New(errcode.BadGateway, "the function answered %s, not a %s object", describe(v), f.Type)
	}
	return newBatch([]*store.Record{r})[0], nil
}
