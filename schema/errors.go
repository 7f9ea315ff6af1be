package schema

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// maxErrors is the most problems Parse reports; a hopeless upload should not
// produce a response as large as itself.
const maxErrors = 100

// Error is one problem of an SDL at a 1-based line and column of the
// uploaded text. Line and Column are 0 for a problem of the text as a whole
// (too many bytes, tokens or types).
type Error struct {
	Line, Column int
	Message      string
}

// Error formats the problem as "line:col: message", or just the message
// when it has no position.
func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Message
	}
	return strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + ": " + e.Message
}

// Errors is every problem Parse found, ordered by position (problems without
// a position first), at most 100 of them and then a note of how many more
// there were. Parse returns it as its error; use errors.As to get at the
// list.
type Errors []*Error

// Error lists the problems one per line, each as "line:col: message".
func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// errorList collects problems while a Model is built.
type errorList struct {
	errs Errors
}

// at records a problem at pos; a nil pos records a problem of the whole text.
func (l *errorList) at(pos *ast.Position, format string, args ...any) {
	e := &Error{Message: fmt.Sprintf(format, args...)}
	if pos != nil {
		e.Line, e.Column = pos.Line, pos.Column
	}
	l.errs = append(l.errs, e)
}

func (l *errorList) empty() bool { return len(l.errs) == 0 }

// result sorts the problems by position, drops exact repeats and caps the
// list at maxErrors.
func (l *errorList) result() Errors {
	es := slices.Clone(l.errs)
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	es = slices.CompactFunc(es, func(a, b *Error) bool { return *a == *b })
	if len(es) > maxErrors {
		n := len(es) - maxErrors
		es = append(es[:maxErrors:maxErrors], &Error{Message: fmt.Sprintf("%d more problems not listed", n)})
	}
	return es
}
