package main

import (
	"encoding/json"
	"strconv"
	"strings"
)

// class picks a scenario's request count.
type class string

const (
	classRead  class = "read"
	classWrite class = "write"
	classLogin class = "login"
	// classAggregate: a request that reads every book.
	classAggregate class = "aggregate"
)

// request is what a scenario sends: method, path and body templates and
// the headers every request carries. The bytes built here are the bytes
// both the sanity check and the load send.
type request struct {
	method string
	path   template
	body   template // nil: no body
	// ids are the values {id} draws from (empty when the templates hold no
	// {id}).
	ids []string
	// head holds the header lines after the request line (Host first),
	// each ending in CRLF, without Content-Length.
	head string
}

// newRequest prepares a request to host (the Host header) with the given
// extra headers (name → value; empty values are left out).
func newRequest(host, method string, path, body template, ids []string, headers [][2]string) *request {
	var h strings.Builder
	h.WriteString("Host: ")
	h.WriteString(host)
	h.WriteString("\r\n")
	for _, kv := range headers {
		if kv[1] == "" {
			continue
		}
		h.WriteString(kv[0])
		h.WriteString(": ")
		h.WriteString(kv[1])
		h.WriteString("\r\n")
	}
	if body != nil {
		h.WriteString("Content-Type: application/json\r\n")
	}
	return &request{method: method, path: path, body: body, ids: ids, head: h.String()}
}

// build appends the request filled with v to req[:0]; bodyBuf is scratch
// space for the body. Both are returned for reuse.
func (r *request) build(req, bodyBuf []byte, v values) ([]byte, []byte) {
	req = append(req[:0], r.method...)
	req = append(req, ' ')
	req = r.path.appendTo(req, v)
	req = append(req, " HTTP/1.1\r\n"...)
	req = append(req, r.head...)
	if r.body == nil {
		return append(req, "\r\n"...), bodyBuf
	}
	bodyBuf = r.body.appendTo(bodyBuf[:0], v)
	req = append(req, "Content-Length: "...)
	req = strconv.AppendInt(req, int64(len(bodyBuf)), 10)
	req = append(req, "\r\n\r\n"...)
	return append(req, bodyBuf...), bodyBuf
}

// answer is a response as the sanity checks see it.
type answer struct {
	status int
	body   []byte
}

// json decodes the body (numbers as float64).
func (a answer) json() (any, error) {
	var v any
	err := json.Unmarshal(a.body, &v)
	return v, err
}

// excerpt is the start of the body, for messages.
func (a answer) excerpt() string {
	const n = 400
	if len(a.body) > n {
		return string(a.body[:n]) + "…"
	}
	return string(a.body)
}

// dig follows keys (strings for objects, ints for arrays) into a decoded
// JSON value; nil when a step is missing.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k < 0 || k >= len(a) {
				return nil
			}
			v = a[k]
		default:
			return nil
		}
	}
	return v
}
