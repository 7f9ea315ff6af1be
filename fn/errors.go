package fn

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors; callers branch with errors.Is. The typed errors below
// match them through Is.
var (
	// ErrNotPublished: the function version named by a binding does not
	// exist (it may be published later). Returned as *NotPublishedError.
	ErrNotPublished = errors.New("fn: function version is not published")
	// ErrTimeout: the call ran past its deadline and was stopped.
	// Returned as *TimeoutError.
	ErrTimeout = errors.New("fn: function timed out")
	// ErrException: the function threw, rejected, failed to load or ended
	// without answering. Returned as *ExceptionError.
	ErrException = errors.New("fn: function failed")
	// ErrFunction: the function answered an error through its callback.
	// Returned as *FuncError.
	ErrFunction = errors.New("fn: function answered an error")
	// ErrResourceExhausted: the call used more memory than its bound and
	// was stopped (or its worker process ran out of memory). Returned as
	// *ResourceError.
	ErrResourceExhausted = errors.New("fn: function used too much memory")
	// ErrTooLarge: input, result or a package is over its bound. Returned
	// as *LimitError from Invoke.
	ErrTooLarge = errors.New("fn: too large")
	// ErrBusy: every runtime stayed busy until the call's deadline.
	ErrBusy = errors.New("fn: too many function calls running")
	// ErrShareBusy: the instance's calls filled its share until the call's
	// deadline (fairshare.go); it is an ErrBusy too.
	ErrShareBusy = errors.New("fn: the instance runs its share of calls")
	// ErrTooDeep: functions reached each other through core.graphql more
	// than MaxDepth calls deep.
	ErrTooDeep = errors.New("fn: functions nested too deep")
	// ErrClosed: the runtime was closed.
	ErrClosed = errors.New("fn: runtime closed")
	// ErrInvalidPackage: an uploaded package is malformed or unsafe
	// (wrapped in an errcode BAD_REQUEST by Packages.Publish).
	ErrInvalidPackage = errors.New("fn: invalid package")
)

// NotPublishedError says which function version is missing.
type NotPublishedError struct {
	App, Name, Version string
}

func (e *NotPublishedError) Error() string {
	return fmt.Sprintf("function %s version %s is not published", e.Name, e.Version)
}

func (e *NotPublishedError) Is(target error) bool { return target == ErrNotPublished }

// FuncError is the error a function answered: callback(null, {code,
// message}). Code and Message are the function's own (bounded in length);
// the caller shows them to its client (GraphQL extensions.code).
type FuncError struct {
	Code    string
	Message string
}

// DefaultErrorCode is FuncError.Code when the function's error has none.
const DefaultErrorCode = "FUNCTION_ERROR"

func (e *FuncError) Error() string { return e.Message }

func (e *FuncError) Is(target error) bool { return target == ErrFunction }

// TimeoutError: the call was stopped at its deadline.
type TimeoutError struct {
	Name, Version string
	After         time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("function %s version %s timed out after %s", e.Name, e.Version, e.After)
}

func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// ExceptionError: the function failed without answering an error of its
// own. Message is one line (for example "TypeError: x is not a
// function"); the stack goes to the instance's function log only, never
// into Error().
type ExceptionError struct {
	Name, Version string
	Message       string
}

func (e *ExceptionError) Error() string {
	return fmt.Sprintf("function %s version %s failed: %s", e.Name, e.Version, e.Message)
}

func (e *ExceptionError) Is(target error) bool { return target == ErrException }

// LimitError: something was over its bound.
type LimitError struct {
	// What is over: "input", "result", …
	What  string
	Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("function %s is larger than %d bytes", e.What, e.Limit)
}

func (e *LimitError) Is(target error) bool { return target == ErrTooLarge }

// ResourceError: the call was stopped because it used more memory than
// its bound (Config.Memory, or the instance's setting up to
// Config.MaxMemory).
type ResourceError struct {
	Name, Version string
	Limit         int64
}

func (e *ResourceError) Error() string {
	return fmt.Sprintf("function %s version %s used more than its memory limit of %s and was stopped", e.Name, e.Version, formatBytes(e.Limit))
}

func (e *ResourceError) Is(target error) bool { return target == ErrResourceExhausted }

// formatBytes writes a byte count as people read it: "64 MiB".
func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
