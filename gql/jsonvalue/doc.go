// Package jsonvalue decodes the JSON bodies and JSON-valued parameters of
// client requests (/graphql, /rest/v1) into the values the executor takes.
//
// # Contract
//
// Decode reads exactly one JSON value (RFC 8259), with optional
// whitespace around it, into the shapes encoding/json gives an `any`:
// map[string]any, []any, float64, string, bool and nil, with one
// exception: a whole number (no fraction, no exponent) that float64
// cannot hold exactly but int64 can (beyond 2^53, such as
// 9007199254740993) is an int64, so that a Long stays exact; graphql-go's
// Int and Float coercion and the stores take int64. Strings are
// coerced to well-formed UTF-8 exactly as encoding/json coerces them:
// each byte of an invalid UTF-8 sequence and each \u escape of a lone
// surrogate becomes U+FFFD.
//
// It refuses what encoding/json lets through silently:
//   - a duplicate key in any object, compared after unescaping (so "a"
//     and "\u0061" are the same key): parsers disagree on which value
//     wins, so a proxy and this service could read two different
//     requests from the same bytes;
//   - data after the value, which is a client bug or a smuggling attempt;
//   - nesting deeper than the caller's bound, which would otherwise cost
//     stack and time out of proportion to the body's size.
//
// It refuses, as encoding/json does, malformed JSON, empty input and
// numbers outside float64's range (1e999).
//
// Every error message names the problem and the byte offset (counting
// from 0) where it lies, and quotes at most about 40 bytes of the input
// (a duplicate key, shortened), so a message can go back to the client.
//
// # Why not encoding/json
//
// Refusing duplicate keys with encoding/json takes a Decoder.Token loop,
// which boxes every token and re-scans the input; it cost about a tenth
// of the server's CPU on a load test creating records. This package is a
// hand-written recursive descent over the byte slice: no reflection,
// one allocation per string (plus its interface box), none for object
// keys it has seen recently, one per array, and decoder scratch space
// pooled between calls.
package jsonvalue
