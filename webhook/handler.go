package webhook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
	"github.com/corehq/core/tenant"
)

// Config bounds webhook calls.
type Config struct {
	// BodyLimit is the largest request body passed on.
	BodyLimit int64
	// TokenLifetime is how long the session token issued for a call's
	// `as` account lasts.
	TokenLifetime time.Duration
}

// DefaultConfig returns a 1 MiB body limit and 5-minute call tokens.
func DefaultConfig() Config {
	return Config{BodyLimit: 1 << 20, TokenLifetime: 5 * time.Minute}
}

// Handler serves /webhook/{domain}/{name}.
type Handler struct {
	cfg Config
	reg *tenant.Registry
	gql *gql.Handler
	log *zap.Logger
}

// New returns the webhook receiver.
func New(cfg Config, reg *tenant.Registry, gqlh *gql.Handler, log *zap.Logger) *Handler {
	return &Handler{cfg: cfg, reg: reg, gql: gqlh, log: log}
}

// Register mounts the receiver for every method.
func (h *Handler) Register(e *echo.Echo) {
	e.Any("/webhook/:domain/:name", h.serve)
}

// notFound is the one answer for an unknown domain or webhook, so that the
// two cannot be told apart.
var notFound = errcode.New(errcode.NotFound, "no such webhook")

// failed is the generic answer when the function fails.
var failed = errcode.New(errcode.BadGateway, "the webhook function failed")

func (h *Handler) serve(c echo.Context) error {
	inst, ok := h.reg.Lookup(c.Param("domain"))
	if !ok {
		return errcode.Write(c, notFound)
	}
	if !inst.Settings.AnonymousRequests {
		return errcode.Write(c, errcode.New(errcode.Forbidden, "this instance does not accept anonymous requests, which webhooks need"))
	}
	ctx := c.Request().Context()
	env := h.gql.EnvFor(inst, auth.Principal{}, "", c.RealIP())
	hook, err := findWebhook(ctx, env.Store, inst.ID, c.Param("name"))
	if err != nil {
		return errcode.Write(c, err)
	}
	body, err := readBody(c.Request(), h.cfg.BodyLimit)
	if err != nil {
		return errcode.Write(c, err)
	}
	compiled, err := env.Release.Compiled()
	if err != nil {
		h.log.Error("compiling the release failed", zap.String("domain", inst.Domain), zap.Error(err))
		return errcode.Write(c, errcode.Wrap(errcode.Internal, err, "internal error"))
	}
	schema, ok := compiled.(*gql.Schema)
	if !ok {
		return errcode.Write(c, errcode.New(errcode.Internal, "internal error"))
	}
	doc, err := document(schema, hook)
	if err != nil {
		h.log.Warn("webhook misconfigured", zap.String("domain", inst.Domain), zap.String("webhook", hook.ID), zap.Error(err))
		return errcode.Write(c, failed)
	}
	as, _ := hook.Fields["as"].(string)
	if as == "" {
		as = hook.CreatedBy
	}
	acct, err := env.Store.Get(ctx, inst.ID, "Account", as)
	if err != nil || acct.Trashed != nil || acct.Fields["enabled"] == false {
		h.log.Warn("webhook account unusable", zap.String("domain", inst.Domain), zap.String("webhook", hook.ID))
		return errcode.Write(c, failed)
	}
	token, claims := env.Accounts.Sessions.Issue(inst.ID, as, env.Accounts.Now(), h.cfg.TokenLifetime)
	env.Principal = auth.Principal{Kind: auth.User, AccountID: as, Session: claims.Session}
	if as == inst.AdminAccountID {
		// A webhook saved with the instance token runs as the instance.
		env.Principal.Kind = auth.InstanceAdmin
	}
	env.Token = token
	res := schema.Do(ctx, env, h.log, gql.Request{Query: doc, Variables: map[string]any{"payload": payload(c.Request(), body)}})
	if len(res.Errors) > 0 {
		if res.Errors[0].Extensions["code"] == string(errcode.Timeout) {
			return errcode.Write(c, errcode.New(errcode.Timeout, "the webhook function timed out"))
		}
		return errcode.Write(c, failed)
	}
	data, _ := res.Data.(map[string]any)
	out, _ := data["response"].(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	if err := writeResponse(c, out); err != nil {
		h.log.Warn("webhook response unusable", zap.String("domain", inst.Domain), zap.String("webhook", hook.ID), zap.Error(err))
		return errcode.Write(c, failed)
	}
	return nil
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
		return nil, notFound
	case err != nil:
		return nil, errcode.Wrap(errcode.Unavailable, err, "the store is unavailable; try again")
	}
	return r, nil
}

// readBody reads the whole body, refusing one over limit.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, errcode.New(errcode.TooLarge, "the request body is larger than %d bytes", limit)
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge) || int64(len(b)) > limit:
		return nil, errcode.New(errcode.TooLarge, "the request body is larger than %d bytes", limit)
	case err != nil:
		return nil, errcode.New(errcode.BadRequest, "the request body could not be read")
	}
	return b, nil
}

// document returns the GraphQL document that runs a webhook's field.
func document(s *gql.Schema, hook *store.Record) (string, error) {
	ref, _ := hook.Fields["query"].(map[string]any)
	opType, _ := ref["type"].(string)
	field, _ := ref["field"].(string)
	if err := gql.CheckWebhookTarget(s.Model(), opType, field); err != nil {
		return "", err
	}
	selection := "status headers body"
	if sel, ok := ref["selection"].(string); ok && strings.TrimSpace(sel) != "" {
		if err := gql.CheckWebhookSelection(sel); err != nil {
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
