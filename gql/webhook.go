package gql

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/fn"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
	"github.com/corehq/core/tenant"
)

// CheckWebhookTarget reports whether a Webhook's query may point at a
// root field: it must exist and have the signature
// (payload: WebhookPayload): WebhookResponse.
func CheckWebhookTarget(m *schema.Model, opType, field string) error {
	var roots []*schema.Field
	switch opType {
	case "Query":
		roots = m.Queries
	case "Mutation":
		roots = m.Mutations
	default:
		return fmt.Errorf("query.type %q: a webhook runs a Query or a Mutation field", opType)
	}
	for _, f := range roots {
		if f.Name != field {
			continue
		}
		if len(f.Args) != 1 || f.Args[0].Name != "payload" || f.Args[0].Type != "WebhookPayload" || f.Args[0].List ||
			f.Type != "WebhookResponse" || f.List {
			return fmt.Errorf("%s.%s must have the signature (payload: WebhookPayload): WebhookResponse", opType, field)
		}
		return nil
	}
	return fmt.Errorf("%s.%s is not a field of the schema", opType, field)
}

// CheckWebhookSelection reports whether a Webhook's query.selection lists
// only fields of WebhookResponse.
func CheckWebhookSelection(sel string) error {
	for _, f := range strings.FieldsFunc(sel, func(r rune) bool { return r == ' ' || r == ',' || r == '\n' || r == '\t' }) {
		switch f {
		case "status", "headers", "body":
		default:
			return fmt.Errorf("query.selection may list only status, headers and body, not %q", f)
		}
	}
	return nil
}

// UnusableResponse starts the message of an error about a webhook
// function's response (CheckWebhookResponse), which the webhook door
// passes on to the caller: it names the problem and holds nothing of the
// function's internals.
const UnusableResponse = "the webhook function's response is unusable: "

// CheckWebhookResponse reports whether a webhook function's response
// (a WebhookResponse as the function answered it, before GraphQL coerces
// it) can be written as an HTTP response: status absent, null or an
// integer from 100 to 599; headers absent, null or an object of string
// values under valid header names, with no line breaks. It is checked
// where the function answers, so that GraphQL's Int cannot turn "200" or
// 200.5 into a status silently, and again by the door that writes it.
func CheckWebhookResponse(v any) error {
	res, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return nil
		}
		return fmt.Errorf("%sit is %s, not an object", UnusableResponse, describe(v))
	}
	if s, ok := res["status"]; ok && s != nil {
		n, ok := s.(float64)
		if i, isInt := s.(int); isInt {
			n, ok = float64(i), true
		}
		if !ok || n != float64(int(n)) || n < 100 || n > 599 {
			return fmt.Errorf("%sstatus %s is not an HTTP status (an integer from 100 to 599)", UnusableResponse, describe(s))
		}
	}
	switch hs := res["headers"].(type) {
	case nil:
	case map[string]any:
		for _, name := range slices.Sorted(maps.Keys(hs)) {
			value, ok := hs[name].(string)
			switch {
			case !ok:
				return fmt.Errorf("%sheader %q is %s: header values must be strings", UnusableResponse, name, describe(hs[name]))
			case !validHeaderName(name) || strings.ContainsAny(value, "\r\n\x00"):
				return fmt.Errorf("%sheader %q is not a valid header", UnusableResponse, name)
			}
		}
	default:
		return fmt.Errorf("%sheaders must be an object of strings, not %s", UnusableResponse, describe(hs))
	}
	return nil
}

// validHeaderName reports whether s is an HTTP token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r >= 0x7f || r <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}

// checkWebhook validates a Webhook record input before it is saved, and
// makes its `as` the saving account when a new webhook does not say.
func (u *upserter) checkWebhook(p graphql.ResolveParams, obj map[string]any, set map[string]any, id, path string) error {
	if ref, ok := obj["query"].(map[string]any); ok {
		opType, _ := ref["type"].(string)
		field, _ := ref["field"].(string)
		if err := CheckWebhookTarget(u.c.schema.model, opType, field); err != nil {
			return errcode.New(errcode.BadRequest, "%s: %v", path, err)
		}
		if sel, ok := ref["selection"].(string); ok {
			if err := CheckWebhookSelection(sel); err != nil {
				return errcode.New(errcode.BadRequest, "%s: %v", path, err)
			}
		}
	}
	if _, given := obj["as"]; given {
		return nil
	}
	if _, err := u.c.Store.Get(p.Context, u.c.Instance.ID, "Webhook", id); err == nil {
		return nil // an update keeps its account
	}
	set["as"] = u.c.Principal.AccountID
	return nil
}

// errNoWebhook is the one answer for an unknown domain or webhook, so
// that the two cannot be told apart.
var errNoWebhook = errcode.New(errcode.NotFound, "no such webhook")

// OpenWebhook opens a call of the webhook name (its name, or its id when
// it has none) of the instance on domain: it finds the Webhook record,
// the document that runs the webhook's field with $payload, and the
// environment that runs it, as the webhook's account (`as`, else its
// creator) with a session token of that account lasting lifetime, which a
// function may call back with. The instance must allow anonymous
// requests. An unknown domain or webhook is NOT_FOUND; a webhook whose
// field the schema lacks is WEBHOOK_FIELD_MISSING, and one whose account
// may not act BAD_GATEWAY, their causes written to the instance's function
// log and kept in the error for the server's.
func (e *Engine) OpenWebhook(ctx context.Context, domain, name, clientIP string, lifetime time.Duration) (Env, Request, error) {
	inst, ok := e.instances.Lookup(domain)
	if !ok {
		return Env{}, Request{}, errNoWebhook
	}
	if err := e.limiter.AdmitWebhook(inst, name); err != nil {
		return Env{}, Request{}, err
	}
	e.meter.Request(inst.ID)
	if !inst.Settings.AnonymousRequests {
		return Env{}, Request{}, errcode.New(errcode.Forbidden, "this instance does not accept anonymous requests, which webhooks need")
	}
	env := e.env(inst, auth.Principal{}, clientIP)
	hook, err := findWebhook(ctx, e.store, inst.ID, name)
	if err != nil {
		return Env{}, Request{}, err
	}
	if env.Schema, err = e.Schema(env.Release); err != nil {
		return Env{}, Request{}, err
	}
	doc, err := webhookDocument(env.Schema.Model(), hook)
	if err != nil {
		e.noteWebhook(inst, name, "cannot run: %v", err)
		return Env{}, Request{}, errcode.Wrap(errcode.WebhookFieldMissing, err,
			"webhook %s cannot run: its query names a field the instance's schema does not have (the instance's function log has the details)", name)
	}
	as, _ := hook.Fields["as"].(string)
	if as == "" {
		as = hook.CreatedBy
	}
	env.Principal, env.Token, err = e.accounts.SessionAs(ctx, e.store, keysOf(inst), as, lifetime)
	if err != nil {
		e.noteWebhook(inst, name, "cannot run as account %s: %v", as, err)
		return Env{}, Request{}, errcode.Wrap(errcode.BadGateway, err, "webhook %s cannot run: the account it runs as may not act", name)
	}
	return env, Request{Query: doc}, nil
}

// RunWebhook runs an opened webhook call and returns the function's
// response (WebhookResponse as an object; empty when the function
// answered none). A failure is classified for the caller without its
// internals — FUNCTION_ERROR (it threw or answered an error),
// FUNCTION_NOT_PUBLISHED, TIMEOUT, or BAD_GATEWAY naming what is unusable
// in its response — its cause kept in the error for the server's log and,
// where the runtime did not write it already, in the instance's function
// log.
func (e *Engine) RunWebhook(ctx context.Context, env Env, req Request) (map[string]any, error) {
	var fnErr error
	env.functionErr = &fnErr
	res := e.Do(ctx, env, req)
	if len(res.Errors) == 0 {
		data, _ := res.Data.(map[string]any)
		out, _ := data["response"].(map[string]any)
		if out == nil {
			out = map[string]any{}
		}
		return out, nil
	}
	first := res.Errors[0]
	cause := cmp.Or(fnErr, errors.New(first.Message))
	var (
		np *fn.NotPublishedError
		te *fn.TimeoutError
		le *fn.LimitError
	)
	switch {
	case strings.HasPrefix(first.Message, UnusableResponse):
		return nil, errcode.New(errcode.BadGateway, "%s", first.Message)
	case first.Extensions["code"] == string(errcode.QuotaExceeded):
		// The call was refused before it ran (functionCallsPerDay).
		err := errcode.New(errcode.QuotaExceeded, "%s", first.Message)
		err.Extensions = maps.Clone(first.Extensions)
		delete(err.Extensions, "code")
		return nil, err
	case errors.As(fnErr, &np):
		e.noteWebhook(env.Instance, np.Name+"@"+np.Version, "%v", np)
		return nil, errcode.Wrap(errcode.FunctionNotPublished, fnErr, "the webhook's function %s version %s is not published", np.Name, np.Version)
	case errors.As(fnErr, &te), errors.Is(fnErr, fn.ErrTimeout), first.Extensions["code"] == string(errcode.Timeout):
		return nil, errcode.Wrap(errcode.Timeout, cause, "the webhook function timed out")
	case errors.Is(fnErr, fn.ErrResourceExhausted):
		return nil, errcode.Wrap(errcode.FunctionResourceExhausted, fnErr, "the webhook function was stopped: %s", fnErr.Error())
	case errors.As(fnErr, &le) && le.What == "input":
		// The request, encoded as the function's input, passed the
		// runtime's input bound: the caller's to make smaller.
		return nil, errcode.Wrap(errcode.TooLarge, fnErr, "the request, as the webhook function's input, is larger than the %d bytes a function accepts", le.Limit)
	case fnErr != nil:
		return nil, errcode.Wrap(errcode.FunctionError, fnErr, "the webhook function failed; the instance's function log has the details")
	}
	return nil, errcode.Wrap(errcode.BadGateway, cause, "the webhook function failed")
}

// noteWebhook writes a line about a webhook that could not run to the
// instance's function log, where the app's developer looks.
func (e *Engine) noteWebhook(inst *tenant.Instance, function, format string, args ...any) {
	if e.functionLog == nil {
		return
	}
	e.functionLog.Append(inst.ID, []fn.LogEntry{{Time: time.Now().UTC(), Level: "runtime", Function: function,
		Call: store.NewID(), Message: "webhook: " + fmt.Sprintf(format, args...)}})
}

// findWebhook returns the Webhook named name, or with that id.
func findWebhook(ctx context.Context, st store.Store, inst, name string) (*store.Record, error) {
	recs, err := st.Find(ctx, inst, &store.Query{
		Type:   "Webhook",
		Filter: &arcql.Compare{Path: arcql.Path{Parts: []string{"name"}}, Op: arcql.OpEq, Value: arcql.Value{Kind: arcql.KindString, Str: name}},
		Limit:  1,
	})
	if err != nil {
		return nil, errcode.Wrap(errcode.Unavailable, err, "the store is unavailable; try again")
	}
	if len(recs) == 1 {
		return recs[0], nil
	}
	r, err := st.Get(ctx, inst, "Webhook", name)
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && (r.Trashed != nil || r.Fields["name"] != nil)):
		// A named webhook is addressed by its name only.
		return nil, errNoWebhook
	case err != nil:
		return nil, errcode.Wrap(errcode.Unavailable, err, "the store is unavailable; try again")
	}
	return r, nil
}

// webhookDocument returns the GraphQL document that runs a webhook's
// field with the variable $payload.
func webhookDocument(m *schema.Model, hook *store.Record) (string, error) {
	ref, _ := hook.Fields["query"].(map[string]any)
	opType, _ := ref["type"].(string)
	field, _ := ref["field"].(string)
	if err := CheckWebhookTarget(m, opType, field); err != nil {
		return "", err
	}
	selection := "status headers body"
	if sel, ok := ref["selection"].(string); ok && strings.TrimSpace(sel) != "" {
		if err := CheckWebhookSelection(sel); err != nil {
			return "", err
		}
		selection = sel
	}
	op := "query"
	if opType == "Mutation" {
		op = "mutation"
	}
	return op + " Webhook($payload: WebhookPayload) { response: " + field + "(payload: $payload) { " + selection + " } }", nil
}
