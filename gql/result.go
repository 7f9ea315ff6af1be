package gql

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
)

// A Result from the compiled executor carries its data already encoded:
// the HTTP handler writes Body as it is, and json.Marshal (echo's c.JSON,
// the REST layer) copies it through MarshalJSON. Data is then nil after
// Run and decoded on demand by Value (Do decodes it at once, for callers
// that read Data). A Result from the reference executor has Data only, and
// Body and MarshalJSON encode it.

// plainResult is Result without its methods, for encoding/json.
type plainResult Result

// Body returns the response body: {"data":…,"errors":[…]} and a newline,
// the bytes echo's c.JSON writes for the Result. Errors are encoded as they
// are when Body is called.
func (r *Result) Body() ([]byte, error) {
	if r.body == nil {
		var b bytes.Buffer
		if err := json.NewEncoder(&b).Encode((*plainResult)(r)); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	b := r.body[:r.dataEnd]
	if len(r.Errors) > 0 {
		errs, err := json.Marshal(r.Errors)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"errors":`...), errs...)
	}
	b = append(b, '}', '\n')
	r.setBody(b)
	return b, nil
}

// MarshalJSON encodes the Result as Body does, without the newline.
func (r *Result) MarshalJSON() ([]byte, error) {
	if r.body == nil {
		return json.Marshal((*plainResult)(r))
	}
	b, err := r.Body()
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil
}

// DataJSON returns the data member as JSON when the compiled executor
// produced it, else nil.
func (r *Result) DataJSON() []byte {
	if r.body == nil {
		return nil
	}
	return r.body[r.dataStart:r.dataEnd]
}

// Value returns the data: Data, or the encoded data decoded (JSON numbers
// as float64), kept in Data.
func (r *Result) Value() any {
	if r.Data != nil || r.body == nil {
		return r.Data
	}
	var v any
	if err := json.Unmarshal(r.body[r.dataStart:r.dataEnd], &v); err == nil {
		r.Data = v
	}
	return r.Data
}

// Member returns the JSON of the data member at a path of object keys
// (find, edges), or nil when a step is missing or not an object. On an
// encoded result it scans the encoding without decoding the values on
// the way, so a caller that wants one small member (is a list empty?)
// does not pay for decoding the whole answer.
func (r *Result) Member(keys ...string) json.RawMessage {
	v, enc, ok := r.at(keys)
	if !ok {
		return nil
	}
	if enc == nil {
		b, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		return b
	}
	if end := skipValue(enc, 0); end > 0 {
		return enc[:end]
	}
	return nil
}

// HasItems reports whether the data member at a path of object keys is a
// list with an item; false when it is empty, missing or not a list. On an
// encoded result it reads no further than the list's first item: a REST
// record lookup asks it of every answer.
func (r *Result) HasItems(keys ...string) bool {
	v, enc, ok := r.at(keys)
	if !ok {
		return false
	}
	if enc == nil {
		items, ok := v.([]any)
		return ok && len(items) > 0
	}
	if enc[0] != '[' {
		return false
	}
	i := skipSpace(enc, 1)
	return i < len(enc) && enc[i] != ']'
}

// at finds the data member at a path of object keys: in the decoded data
// (v), or in the encoding, from the member's start to the data's end
// (enc, never empty); ok is false when a step is missing or not an object.
func (r *Result) at(keys []string) (v any, enc []byte, ok bool) {
	if r.body == nil || r.Data != nil {
		v = r.Data
		for _, k := range keys {
			m, isMap := v.(map[string]any)
			if !isMap {
				return nil, nil, false
			}
			if v, ok = m[k]; !ok {
				return nil, nil, false
			}
		}
		return v, nil, true
	}
	enc = r.body[r.dataStart:r.dataEnd]
	for _, k := range keys {
		if enc = memberFrom(enc, k); enc == nil {
			return nil, nil, false
		}
	}
	return nil, enc, len(enc) > 0
}

// member returns the JSON of member key of the JSON object obj, or nil.
func member(obj []byte, key string) []byte {
	v := memberFrom(obj, key)
	if end := skipValue(v, 0); end > 0 {
		return v[:end]
	}
	return nil
}

// memberFrom returns obj from the start of member key's value on, or nil
// when obj is not an object or has no such member: a caller going deeper
// needs the value's start, not its end. obj is the executor's own encoding
// (valid JSON), so a scan that tracks strings and nesting finds the
// members' bounds.
func memberFrom(obj []byte, key string) []byte {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return nil // '}' or malformed: no such member
		}
		kEnd := skipValue(obj, i)
		name := obj[i:kEnd]
		i = skipSpace(obj, kEnd)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		vStart := skipSpace(obj, i+1)
		if vStart >= len(obj) {
			return nil
		}
		if len(name) == len(key)+2 && string(name[1:len(name)-1]) == key {
			return obj[vStart:]
		}
		vEnd := skipValue(obj, vStart)
		if vEnd <= vStart {
			return nil
		}
		i = skipSpace(obj, vEnd)
		if i >= len(obj) || obj[i] != ',' {
			return nil
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i]; for a
// string, the index after its closing quote.
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			i++
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			i++
		case ',', ':', ' ', '\n', '\t', '\r': // between the items of a list or object
			i++
		default:
			for i < len(b) && !strings.ContainsRune(",}] \n\t\r", rune(b[i])) {
				i++
			}
		}
		if depth <= 0 {
			if depth < 0 {
				return i - 1 // the closer of the enclosing value
			}
			return i
		}
	}
	return i
}

// Release returns the Result's buffer for reuse. The Result's Body and
// encoded data must not be used afterwards; Data stays as it is.
func (r *Result) Release() {
	if r.pooled != nil {
		putBuffer(r.pooled, r.body)
	}
	r.pooled, r.body, r.dataStart, r.dataEnd = nil, nil, 0, 0
}

// setBody keeps a (possibly grown) body, and the pooled buffer with it.
func (r *Result) setBody(b []byte) {
	r.body = b
	if r.pooled != nil {
		*r.pooled = b[:0]
	}
}

// Response buffers are pooled; a buffer grown beyond maxPooledBuffer (a
// huge answer) is left to the collector.
const (
	initialBuffer   = 4 << 10
	maxPooledBuffer = 1 << 20
)

var buffers = sync.Pool{New: func() any {
	b := make([]byte, 0, initialBuffer)
	return &b
}}

func getBuffer() *[]byte { return buffers.Get().(*[]byte) }

func putBuffer(p *[]byte, b []byte) {
	if cap(b) > maxPooledBuffer {
		return
	}
	*p = b[:0]
	buffers.Put(p)
}
