package arcql

import "fmt"

// Error is every error Parse and Bind return: a position in the query text
// and a message fit to show the user (it never quotes a hidden value).
// Line and Col are 1-based, Col counting characters; both are 0 for an error
// about the query as a whole, such as its length.
type Error struct {
	Line, Col int
	Msg       string
}

// Error formats as "arcql: 1:14: expected a value after '=', found end of
// input", or "arcql: query is longer than 4096 bytes" without a position.
func (e *Error) Error() string {
	if e.Line == 0 {
		return "arcql: " + e.Msg
	}
	return fmt.Sprintf("arcql: %d:%d: %s", e.Line, e.Col, e.Msg)
}

func errorAt(p Pos, format string, args ...any) *Error {
	return &Error{Line: p.Line, Col: p.Col, Msg: fmt.Sprintf(format, args...)}
}
