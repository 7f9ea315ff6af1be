package gql

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/gqlerrors"
	"github.com/graphql-go/graphql/language/parser"
	"github.com/graphql-go/graphql/language/source"
	"go.uber.org/zap"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
)

// maxDocumentBytes bounds a document's text before it is parsed.
const maxDocumentBytes = 64 << 10

// Request is a GraphQL request.
type Request struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName,omitempty"`
	Variables     map[string]any `json:"variables,omitempty"`
}

// Result is a GraphQL response. Status is the HTTP status for it: 400 when
// the document could not run at all, else 200 (errors of fields travel in
// Errors beside the data).
type Result struct {
	Data   any            `json:"data"`
	Errors []errcode.Item `json:"errors,omitempty"`
	Status int            `json:"-"`
	// RetryAfter is the seconds to wait when Status is 429.
	RetryAfter int `json:"-"`
}

// Do runs one request on the schema for env. Documents are parsed and
// validated once per schema and text, then served from the cache.
func (s *Schema) Do(ctx context.Context, env Env, log *zap.Logger, req Request) *Result {
	doc := s.document(req.Query)
	if len(doc.errors) > 0 {
		return documentErrors(doc.errors)
	}
	if err := checkLimits(doc.ast, req.Variables, s.cfg); err != nil {
		return documentErrors([]error{err})
	}
	if env.Principal.Kind == auth.Anonymous {
		if err := checkAnonymous(s.model, doc.ast, req.OperationName, env.Instance); err != nil {
			status, body := errcode.Body(err)
			return &Result{Status: status, Errors: body.Errors}
		}
	}
	c := &call{Env: env, schema: s, vars: req.Variables, now: time.Now().UTC().Truncate(time.Millisecond)}
	res := graphql.Execute(graphql.ExecuteParams{
		Schema:        s.gql,
		AST:           doc.ast,
		OperationName: req.OperationName,
		Args:          req.Variables,
		Context:       withCall(ctx, c),
	})
	out := &Result{Data: res.Data, Status: http.StatusOK}
	for _, fe := range res.Errors {
		out.Errors = append(out.Errors, presentError(fe, log))
	}
	if res.Data == nil && len(out.Errors) > 0 && len(res.Errors[0].Path) == 0 {
		// The request failed before any field ran (bad variables, unknown
		// operation): nothing executed.
		out.Status = http.StatusBadRequest
	}
	for _, e := range out.Errors {
		if e.Extensions["code"] == string(errcode.RateLimited) {
			out.Status = http.StatusTooManyRequests
			out.RetryAfter, _ = e.Extensions["retryAfter"].(int)
		}
	}
	return out
}

// document returns the parsed and validated document for text, from the
// cache when it is there.
func (s *Schema) document(text string) *document {
	if d, ok := s.docs.get(text); ok {
		return d
	}
	d := &document{}
	if len(text) > maxDocumentBytes {
		d.errors = []error{errors.New("the document is longer than 65536 bytes")}
		return d // not cached: the text itself is large
	}
	doc, err := parser.Parse(parser.ParseParams{Source: source.NewSource(&source.Source{Body: []byte(text), Name: "GraphQL request"})})
	if err != nil {
		d.errors = []error{err}
	} else {
		v := graphql.ValidateDocument(&s.gql, doc, graphql.SpecifiedRules)
		if !v.IsValid {
			for _, e := range v.Errors {
				d.errors = append(d.errors, e)
			}
		} else {
			d.ast = doc
		}
	}
	s.docs.put(text, d)
	return d
}

// documentErrors answers a document that cannot run: 400, each error
// with code BAD_REQUEST.
func documentErrors(errs []error) *Result {
	out := &Result{Status: http.StatusBadRequest}
	for _, err := range errs {
		item := errcode.Item{Message: err.Error(), Extensions: map[string]any{"code": string(errcode.BadRequest)}}
		var fe gqlerrors.FormattedError
		if errors.As(err, &fe) {
			item.Message = fe.Message
		}
		out.Errors = append(out.Errors, item)
	}
	return out
}

// presentError is the one place a GraphQL error becomes what the client
// sees: coded errors keep their message and code; request-level errors of
// graphql-go (bad variables) are BAD_REQUEST; anything else is INTERNAL
// with a generic message, logged with its cause.
func presentError(fe gqlerrors.FormattedError, log *zap.Logger) errcode.Item {
	cause := fe.OriginalError()
	var ge *gqlerrors.Error
	if errors.As(cause, &ge) && ge.OriginalError != nil {
		cause = ge.OriginalError
	}
	item := errcode.Item{Message: fe.Message, Path: fe.Path}
	var ce *errcode.Error
	switch {
	case errors.As(cause, &ce):
		coded := ce.Item()
		item.Message, item.Extensions = coded.Message, coded.Extensions
		if ce.Code == errcode.Internal && log != nil {
			log.Error("internal error", zap.Error(ce.Err), zap.Any("path", fe.Path))
		}
	case len(fe.Path) == 0:
		item.Extensions = map[string]any{"code": string(errcode.BadRequest)}
	default:
		if log != nil {
			log.Error("resolver failed", zap.String("error", fe.Message), zap.Any("path", fe.Path))
		}
		item.Message = "internal error"
		item.Extensions = map[string]any{"code": string(errcode.Internal)}
	}
	return item
}
