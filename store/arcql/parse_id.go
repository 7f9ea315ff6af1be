package arcql

import "strings"

// The filter of a read by id. The REST record route filters with
// `core.id = <Quote(id)>` on every GET of one record, the hottest read,
// and the parser's machinery (parser, lexer, the path split) costs more
// than the query it returns. parseIDEquals reads that text itself.

// idEqualsPrefix is a read by id's filter up to the id's quoted text.
const idEqualsPrefix = "core.id = '"

// parseIDEquals returns the query the parser reads from text when text
// is `core.id = '<id>'`, written as the REST route writes it, with an id
// that needs no escape (no quote, backslash or control character) and is
// within lim; ok is false for any other text, which the parser then
// reads. text has passed Parse's checks (length, UTF-8, NUL), and lim
// has its defaults (one comparison at least is allowed).
func parseIDEquals(text string, lim Limits) (q *Query, ok bool) {
	id, ok := strings.CutPrefix(text, idEqualsPrefix)
	if !ok {
		return nil, false
	}
	id, ok = strings.CutSuffix(id, "'")
	if !ok || len(id) > lim.MaxStringBytes {
		return nil, false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c == '\'' || c == '\\' || c < 0x20 || c == 0x7f {
			return nil, false
		}
	}
	// One allocation for the query, its comparison and its path, whose
	// parts are the text's, as the parser's are.
	x := &struct {
		q     Query
		c     Compare
		parts [2]string
	}{parts: [2]string{text[:len("core")], text[len("core."):len("core.id")]}}
	x.c = Compare{
		Path:  Path{Parts: x.parts[:], Pos: Pos{Line: 1, Col: 1}},
		Op:    OpEq,
		Value: Value{Kind: KindString, Str: id, Pos: Pos{Line: 1, Col: len(idEqualsPrefix)}},
	}
	x.q.Filter = &x.c
	return &x.q, true
}
