package gql

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/gqlerrors"
	"github.com/graphql-go/graphql/language/ast"
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

	// body holds {"data":<data> as the compiled executor wrote it (then,
	// once Body is called, the whole response); the data spans
	// [dataStart, dataEnd). nil for the reference executor (result.go).
	body               []byte
	dataStart, dataEnd int
	pooled             *[]byte
	// compiled: the compiled executor answered.
	compiled bool
}

// Do runs one request on the schema for env. Documents are parsed and
// validated once per schema and text, then served from the cache. Data is
// always set (decoded from the encoded answer when the compiled executor
// ran); Run leaves that decoding to those who need it.
func (s *Schema) Do(ctx context.Context, env Env, log *zap.Logger, req Request) *Result {
	res := s.Run(ctx, env, log, req)
	res.Value()
	return res
}

// Run is Do for callers that write the answer as it is: Result.Body (or
// json.Marshal of the Result) gives the encoded response, Result.Value the
// decoded data, and Release recycles the buffer afterwards.
func (s *Schema) Run(ctx context.Context, env Env, log *zap.Logger, req Request) *Result {
	if env.mayIntrospect() {
		return s.run(ctx, env, log, req)
	}
	res := s.run(ctx, env, log, req)
	s.hideSchema(res, req.Query)
	return res
}

// run is Run before the errors are shown to a caller who may not
// introspect (hideSchema).
func (s *Schema) run(ctx context.Context, env Env, log *zap.Logger, req Request) *Result {
	doc := s.document(req.Query)
	if doc.introspects && !env.mayIntrospect() {
		// Before the document's errors: a caller who may not introspect
		// learns nothing from the validation of __schema's selections.
		status, body := errcode.Body(introspectionRefused(env))
		return &Result{Status: status, Errors: body.Errors}
	}
	if len(doc.errors) > 0 {
		return documentErrors(doc.errors)
	}
	if err := checkLimits(doc.ast, req.Variables, s.cfg); err != nil {
		return documentErrors([]error{err})
	}
	if op := operation(doc.ast, req.OperationName); op != nil && op.Operation == ast.OperationTypeSubscription {
		return documentErrors([]error{errSubscriptionTransport})
	}
	if env.authErr != nil && !onlyLogins(doc.ast, req.OperationName) {
		status, body := errcode.Body(env.authErr)
		return &Result{Status: status, Errors: body.Errors}
	}
	if env.Principal.Kind == auth.Anonymous {
		if err := checkAnonymous(s.model, doc.ast, req.OperationName, env.Instance); err != nil {
			status, body := errcode.Body(err)
			return &Result{Status: status, Errors: body.Errors}
		}
		if !onlyLogins(doc.ast, req.OperationName) {
			if err := env.admitAnonymous(); err != nil {
				return errorResult(err)
			}
		}
	}
	if err := checkVariables(&s.gql, doc.ast, req.OperationName, req.Variables); err != nil {
		status, body := errcode.Body(err)
		return &Result{Status: status, Errors: body.Errors}
	}
	c := &call{Env: env, schema: s, log: log, vars: req.Variables, now: time.Now().UTC().Truncate(time.Millisecond)}
	ctx = withCall(ctx, c)
	var res *Result
	if differential != nil {
		res = differential(ctx, s, req,
			func(ctx context.Context) *Result { return s.execute(ctx, doc, req, log) },
			func(ctx context.Context) *Result { return s.executeReference(ctx, doc, req, log) })
	} else {
		res = s.execute(ctx, doc, req, log)
	}
	if pastDeadline(ctx) {
		// Past the request's deadline: what ran is cut short, so the
		// answer is the time-out, not partial data.
		res.Release()
		status, body := errcode.Body(errcode.New(errcode.Timeout, "the request ran past its deadline"))
		return &Result{Status: status, Errors: body.Errors}
	}
	return res
}

// execute runs a validated document: on its compiled plan, or on
// graphql.Execute where the plan does not reach (plan.go).
func (s *Schema) execute(ctx context.Context, doc *document, req Request, log *zap.Logger) *Result {
	if !s.referenceOnly {
		if op := doc.ops.get(&s.gql, s.direct, doc.ast, req.OperationName); op.fallback == "" {
			if res := s.executePlan(ctx, op, req, log); res != nil {
				return res
			}
		}
	}
	return s.executeReference(ctx, doc, req, log)
}

// executeReference runs a document with graphql.Execute.
func (s *Schema) executeReference(ctx context.Context, doc *document, req Request, log *zap.Logger) *Result {
	res := graphql.Execute(graphql.ExecuteParams{
		Schema:        s.gql,
		AST:           doc.ast,
		OperationName: req.OperationName,
		Args:          req.Variables,
		Context:       ctx,
	})
	out := &Result{Data: res.Data}
	present(out, res.Errors, res.Data == nil, log)
	return out
}

// executePlan runs a compiled operation; nil when this request's
// @skip/@include variables select a plan that could not be compiled.
func (s *Schema) executePlan(ctx context.Context, op *opPlan, req Request, log *zap.Logger) *Result {
	if err := ctx.Err(); err != nil {
		out := &Result{compiled: true}
		present(out, []gqlerrors.FormattedError{gqlerrors.FormatError(err)}, true, log)
		return out
	}
	vars, err := coerceVariables(op.vars, req.Variables)
	if err != nil {
		out := &Result{compiled: true}
		present(out, []gqlerrors.FormattedError{gqlerrors.FormatError(err)}, true, log)
		return out
	}
	pl := op.planFor(vars)
	if pl == nil {
		return nil
	}
	out := &Result{compiled: true, pooled: getBuffer()}
	buf := append((*out.pooled)[:0], `{"data":`...)
	out.dataStart = len(buf)
	buf, errs, null, encodeErr := pl.execute(ctx, vars, buf)
	out.dataEnd = len(buf)
	out.setBody(buf)
	switch {
	case ctx.Err() != nil:
		// graphql.Execute answers the context's error once it ends.
		out.Release()
		present(out, []gqlerrors.FormattedError{gqlerrors.FormatError(ctx.Err())}, true, log)
	case encodeErr != nil:
		out.Release()
		if log != nil {
			log.Error("unencodable result", zap.Error(encodeErr))
		}
		out.Status = http.StatusInternalServerError
		out.Errors = []errcode.Item{errcode.New(errcode.Internal, "internal error").Item()}
	default:
		present(out, errs, null, log)
	}
	return out
}

// present turns graphql-go's errors into the Result's, and sets its status:
// 400 when the request failed before any field ran (bad variables, unknown
// operation), 429 when a login was throttled, else 200.
func present(out *Result, errs []gqlerrors.FormattedError, noData bool, log *zap.Logger) {
	out.Status = http.StatusOK
	for _, fe := range errs {
		out.Errors = append(out.Errors, presentError(fe, log))
	}
	if noData && len(out.Errors) > 0 && len(errs[0].Path) == 0 {
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
	if err := guard(text, s.cfg); err != nil {
		d.errors = []error{err}
		return d // not cached: refused in time proportional to its length
	}
	doc, err := parser.Parse(parser.ParseParams{Source: source.NewSource(&source.Source{Body: []byte(text), Name: "GraphQL request"})})
	if err == nil {
		err = fragmentCycle(doc)
	}
	if err == nil {
		err = fragmentCost(doc, s.cfg)
	}
	if err == nil {
		d.introspects = introspects(doc)
	}
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

// errorResult is the answer of a request refused before it ran, with
// Retry-After for RATE_LIMITED.
func errorResult(err error) *Result {
	status, body := errcode.Body(err)
	res := &Result{Status: status, Errors: body.Errors}
	res.RetryAfter, _ = errcode.As(err).Extensions["retryAfter"].(int)
	return res
}

// documentErrors answers a document that cannot run: 400, each error
// with code BAD_REQUEST, or its own (TOO_COMPLEX for a limit).
func documentErrors(errs []error) *Result {
	out := &Result{Status: http.StatusBadRequest}
	for _, err := range errs {
		code := errcode.BadRequest
		if e := errcode.As(err); e != nil && e.Code.Status() == http.StatusBadRequest {
			code = e.Code
		}
		item := errcode.Item{Message: err.Error(), Extensions: map[string]any{"code": string(code)}}
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

// pastDeadline reports whether ctx's deadline has passed: by its error, or
// by the clock while its timer has yet to fire (a function's worker
// process, timing its own copy of the deadline, may answer first).
func pastDeadline(ctx context.Context) bool {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}
