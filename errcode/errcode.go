// Package errcode defines the coded errors clients see, the HTTP statuses
// they map to, and the one envelope every door of the service answers
// failures with:
//
//	{"errors": [{"message": "…", "extensions": {"code": "NOT_FOUND"}}]}
//
// Only the edges (the GraphQL error presenter, the REST, admin and webhook
// handlers) turn errors into messages and statuses. An error that carries
// no code is answered as INTERNAL with a generic message: driver text and
// stacks never reach a client.
package errcode

import (
	"errors"
	"fmt"
	"net/http"
)

// Code is a stable, machine-readable error code (extensions.code).
type Code string

// The codes of the service and, through Status, their HTTP statuses.
const (
	BadRequest      Code = "BAD_REQUEST"
	BadFilter       Code = "BAD_FILTER"
	Unauthenticated Code = "UNAUTHENTICATED"
	Forbidden       Code = "FORBIDDEN"
	NotFound        Code = "NOT_FOUND"
	UnknownType     Code = "UNKNOWN_TYPE"
	UnknownDomain   Code = "UNKNOWN_DOMAIN"
	Referenced      Code = "REFERENCED"
	Conflict        Code = "CONFLICT"
	TooLarge        Code = "TOO_LARGE"
	RateLimited     Code = "RATE_LIMITED"
	Unavailable     Code = "UNAVAILABLE"
	Internal        Code = "INTERNAL"
	// BadGateway: a function (webhook) failed or answered something unusable.
	BadGateway Code = "BAD_GATEWAY"
	// FunctionError: a webhook's function threw or answered an error (its
	// details are in the instance's function log).
	FunctionError Code = "FUNCTION_ERROR"
	// FunctionResourceExhausted: a function call used more memory than
	// its limit (the instance's functionMemory) and was stopped; the
	// message names the limit.
	FunctionResourceExhausted Code = "FUNCTION_RESOURCE_EXHAUSTED"
	// FunctionNotPublished: a webhook's field is bound to a function
	// version that is not published.
	FunctionNotPublished Code = "FUNCTION_NOT_PUBLISHED"
	// WebhookFieldMissing: a webhook's query names a root field the
	// instance's schema does not have (or not with a webhook's signature),
	// for example after a release swap removed it.
	WebhookFieldMissing Code = "WEBHOOK_FIELD_MISSING"
	// Timeout: a function ran past its deadline, or a request past the
	// server's request time-out.
	Timeout Code = "TIMEOUT"
	// MethodNotAllowed: the path exists but not with the request's method.
	MethodNotAllowed Code = "METHOD_NOT_ALLOWED"
	// TooComplex: a document, filter or schema passes one of the limits on
	// its shape (nesting, tokens, aliases, depth, cost); the message names
	// the limit.
	TooComplex Code = "TOO_COMPLEX"
	// BreakingChange: a release swap would leave stored records that the
	// new release reads wrongly (a field's type changed while records
	// hold values, a field became required while records lack it).
	BreakingChange Code = "BREAKING_CHANGE"
	// QuotaExceeded: a write or a function call would pass one of the
	// instance's quotas (setting quota); the message names it and its
	// limit. 403, not 429: waiting does not lift a records or storage
	// quota, and clients retry a 429 by themselves.
	QuotaExceeded Code = "QUOTA_EXCEEDED"
	// HistoryGone: a subscription's after cursor (or Last-Event-ID) is
	// older than the changes the instance retains; the client reads the
	// records afresh and subscribes without one.
	HistoryGone Code = "HISTORY_GONE"
	// SubscriptionLimit: a subscription bound was passed (subscriptions
	// per connection, events waiting for a slow client); the message
	// names it.
	SubscriptionLimit Code = "SUBSCRIPTION_LIMIT"
	// UnsupportedMediaType: a request body in an encoding the service
	// does not read (a webhook body with a Content-Encoding such as gzip,
	// which is never decompressed).
	UnsupportedMediaType Code = "UNSUPPORTED_MEDIA_TYPE"
	// TriggerRefused: a before trigger answered false, failed or timed
	// out, so the write was refused and nothing written; the message
	// names the trigger's field (extension trigger) and why.
	TriggerRefused Code = "TRIGGER_REFUSED"
)

// Status is the HTTP status a code answers with.
func (c Code) Status() int {
	switch c {
	case BadRequest, BadFilter, TooComplex:
		return http.StatusBadRequest
	case Unauthenticated:
		return http.StatusUnauthorized
	case Forbidden, QuotaExceeded, TriggerRefused:
		return http.StatusForbidden
	case MethodNotAllowed:
		return http.StatusMethodNotAllowed
	case NotFound, UnknownType, UnknownDomain:
		return http.StatusNotFound
	case Referenced, Conflict, BreakingChange:
		return http.StatusConflict
	case TooLarge:
		return http.StatusRequestEntityTooLarge
	case RateLimited, SubscriptionLimit:
		return http.StatusTooManyRequests
	case HistoryGone:
		return http.StatusGone
	case UnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case Unavailable:
		return http.StatusServiceUnavailable
	case BadGateway, FunctionError, FunctionResourceExhausted, FunctionNotPublished, WebhookFieldMissing:
		return http.StatusBadGateway
	case Timeout:
		return http.StatusGatewayTimeout
	default:
		return http.StatusInternalServerError
	}
}

// Error is an error meant for a client: its Message is shown as is.
type Error struct {
	Code    Code
	Message string
	// Err is the cause, kept for logs and errors.Is; never shown.
	Err error
	// Extensions are shown beside the code (e.g. retryAfter, seconds).
	Extensions map[string]any
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with a message for the client and err as the
// hidden cause.
func Wrap(code Code, err error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// As returns the coded error in err's chain, or an INTERNAL one with a
// generic message when there is none.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: Internal, Message: "internal error", Err: err}
}

// Item is one entry of the errors envelope.
type Item struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// Envelope is the body of a failed request.
type Envelope struct {
	Data   any    `json:"data,omitempty"`
	Errors []Item `json:"errors"`
}

// Body returns the envelope for err and the status it answers with.
func Body(err error) (int, Envelope) {
	e := As(err)
	return e.Code.Status(), Envelope{Errors: []Item{e.Item()}}
}

// Item returns the envelope entry of e: its message, code and extensions.
func (e *Error) Item() Item {
	ext := map[string]any{"code": string(e.Code)}
	for k, v := range e.Extensions {
		ext[k] = v
	}
	return Item{Message: e.Message, Extensions: ext}
}
