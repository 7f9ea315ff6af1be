package rest

import (
	"bytes"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql/jsonvalue"
)

// maxJSONDepth bounds the nesting of a JSON body or parameter value: far
// more than any schema needs, far less than would strain the decoder.
const maxJSONDepth = 64

// decodeObject decodes a request body that must be one JSON object. An
// empty (or blank) body is nil. Anything else — another JSON value, a
// duplicate key at any depth, malformed JSON, more after the object — is
// BAD_REQUEST naming the problem.
func decodeObject(b []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	v, err := decodeJSON(b)
	if err != nil {
		return nil, errcode.New(errcode.BadRequest, "the body is not valid JSON: %s", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errcode.New(errcode.BadRequest, "the body must be a JSON object, not %s", jsonvalue.Kind(v))
	}
	return m, nil
}

// decodeJSON decodes exactly one JSON value into the shapes
// encoding/json gives an `any` (numbers as float64), refusing what
// encoding/json lets through: duplicate keys, whose meaning differs
// between parsers, and data after the value.
func decodeJSON(b []byte) (any, error) {
	return jsonvalue.Decode(b, maxJSONDepth)
}
