package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/corehq/core/errcode"
)

// maxJSONDepth bounds the nesting of a JSON body or parameter value: far
// more than any schema needs, far less than would strain the decoder.
const maxJSONDepth = 64

// readBody reads a request body, which the server has capped at its body
// limit: over it is TOO_LARGE.
func readBody(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return nil, errcode.Wrap(errcode.TooLarge, err, "request body is larger than the limit of %d bytes", mbe.Limit)
		}
		return nil, errcode.Wrap(errcode.BadRequest, err, "reading the request body failed")
	}
	return b, nil
}

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
		return nil, errcode.New(errcode.BadRequest, "the body must be a JSON object, not %s", jsonKind(v))
	}
	return m, nil
}

// decodeJSON decodes exactly one JSON value into the shapes
// encoding/json gives an `any` (numbers as float64), refusing what
// encoding/json lets through: duplicate keys, whose meaning differs
// between parsers, and data after the value.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more data after the JSON value at byte %d", dec.InputOffset())
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonProblem(err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, float64, bool or nil
	}
	if depth >= maxJSONDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxJSONDepth)
	}
	switch d {
	case '{':
		m := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, jsonProblem(err)
			}
			key, _ := kt.(string) // the decoder allows only strings as keys
			if _, dup := m[key]; dup {
				return nil, fmt.Errorf("duplicate key %s", quoteShort(key))
			}
			if m[key], err = decodeValue(dec, depth+1); err != nil {
				return nil, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, jsonProblem(err)
		}
		return m, nil
	default: // '[': a closing delimiter cannot start a value
		l := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, jsonProblem(err)
		}
		return l, nil
	}
}

// jsonProblem describes a decoding error without echoing the input.
func jsonProblem(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("malformed JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("unexpected end of JSON")
	}
	return fmt.Errorf("malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind names the kind of a decoded JSON value.
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}
