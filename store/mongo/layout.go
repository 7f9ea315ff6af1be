package mongo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/corehq/core/store"
)

// Field names of a record document (doc.go, "Layout").
const (
	fInst      = "i"
	fType      = "t"
	fID        = "id"
	fCreated   = "c"
	fUpdated   = "u"
	fTrashed   = "x"
	fCreatedBy = "b"
	fImpl      = "m"
	fVersion   = "v"
	fFields    = "f"
)

// metaField maps the bound metadata names of arcql to record fields.
var metaField = map[string]string{
	"core.id":        fID,
	"core.created":   fCreated,
	"core.updated":   fUpdated,
	"core.trashed":   fTrashed,
	"core.createdBy": fCreatedBy,
	"core.impl":      fImpl,
}

// checkName rejects an instance id or type name that would make keys
// ambiguous: empty, or holding the separator "/".
func checkName(what, s string) error {
	if s == "" || strings.Contains(s, "/") {
		return fmt.Errorf("mongo: %s %q: must be non-empty and without '/'", what, s)
	}
	return nil
}

// recordKey is the _id of a record: deterministic, so that concurrent
// upserts of one record meet on one document.
func recordKey(inst, typ, id string) string { return inst + "/" + typ + "/" + id }

// escapeKey makes an object key safe as a MongoDB field name: '%', '.', a
// leading '$' and NUL are written %XX, and the empty key is "%".
func escapeKey(k string) string {
	if k == "" {
		return "%"
	}
	if !strings.ContainsAny(k, "%.\x00") && k[0] != '$' {
		return k
	}
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '%' || c == '.' || c == 0 || (c == '$' && i == 0):
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// unescapeKey reverses escapeKey.
func unescapeKey(k string) string {
	if k == "%" {
		return ""
	}
	if !strings.Contains(k, "%") {
		return k
	}
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		if k[i] == '%' && i+2 < len(k) {
			if n, err := strconv.ParseUint(k[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(k[i])
	}
	return b.String()
}

// fieldPath is the dotted document path of a record field and the parts
// below it.
func fieldPath(parts []string) string {
	var b strings.Builder
	b.WriteString(fFields)
	for _, p := range parts {
		b.WriteByte('.')
		b.WriteString(escapeKey(p))
	}
	return b.String()
}

// nestedList is the key of the object that stands for a list directly
// inside a list (FerretDB v1 refuses nested arrays). No escaped key is
// "%l": escapeKey writes '%' only as "%25" or before two hex digits.
const nestedList = "%l"

// encodeValue turns a normalized field value (store.NormalizeValue) into
// what is stored: object keys escaped, a list inside a list wrapped as
// {"%l": …}. NaN and infinities are refused: JSON cannot carry them and
// some servers reject them. So is any type NormalizeValue does not return.
func encodeValue(field string, v any) (any, error) {
	switch v := v.(type) {
	case nil, bool, int64, string:
		return v, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("mongo: field %s: %v is not a storable number", field, v)
		}
		return v, nil
	case []any:
		out := make(bson.A, len(v))
		for i, e := range v {
			n, err := encodeValue(field, e)
			if err != nil {
				return nil, err
			}
			if inner, ok := n.(bson.A); ok {
				n = bson.M{nestedList: inner}
			}
			out[i] = n
		}
		return out, nil
	case map[string]any:
		out := make(bson.M, len(v))
		for k, e := range v {
			n, err := encodeValue(field, e)
			if err != nil {
				return nil, err
			}
			out[escapeKey(k)] = n
		}
		return out, nil
	}
	return nil, fmt.Errorf("mongo: field %s: unsupported value type %T", field, v)
}

// decodeValue turns a decoded BSON value back into store.Record's shapes.
func decodeValue(v any) any {
	switch v := v.(type) {
	case bson.A:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = decodeValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = decodeValue(e)
		}
		return out
	case bson.M:
		return decodeObject(v)
	case map[string]any:
		return decodeObject(v)
	case bson.D:
		m := make(map[string]any, len(v))
		for _, e := range v {
			m[e.Key] = e.Value
		}
		return decodeObject(m)
	case int32:
		return int64(v)
	case int:
		return int64(v)
	case bson.DateTime:
		return v.Time().UTC()
	}
	return v
}

func decodeObject(m map[string]any) any {
	if inner, ok := m[nestedList]; ok && len(m) == 1 {
		if l, ok := decodeValue(inner).([]any); ok {
			return l
		}
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[unescapeKey(k)] = decodeValue(e)
	}
	return out
}

// dateOf stores a time: BSON dates keep milliseconds, which is what the
// service hands the store (it truncates its clock to milliseconds).
func dateOf(t time.Time) bson.DateTime { return bson.NewDateTimeFromTime(t) }

// decodeRecord builds a record from a stored document.
func decodeRecord(doc bson.M) (*store.Record, error) {
	r := &store.Record{Fields: map[string]any{}}
	var ok bool
	if r.Type, ok = doc[fType].(string); !ok {
		return nil, errors.New("mongo: stored record without a type")
	}
	if r.ID, ok = doc[fID].(string); !ok {
		return nil, errors.New("mongo: stored record without an id")
	}
	r.Created = timeOf(doc[fCreated])
	r.Updated = timeOf(doc[fUpdated])
	if x, ok := doc[fTrashed].(bson.DateTime); ok {
		t := x.Time().UTC()
		r.Trashed = &t
	}
	r.CreatedBy, _ = doc[fCreatedBy].(string)
	r.Impl, _ = doc[fImpl].(string)
	var f map[string]any
	switch v := doc[fFields].(type) {
	case bson.M:
		f = v
	case map[string]any:
		f = v
	}
	for k, v := range f {
		r.Fields[unescapeKey(k)] = decodeValue(v)
	}
	return r, nil
}

func timeOf(v any) time.Time {
	if d, ok := v.(bson.DateTime); ok {
		return d.Time().UTC()
	}
	return time.Time{}
}

// valueKey is how a unique value is named in the uniques collection: its
// kind and text, numbers compared as float64 (as the bolt store does), long
// values hashed. ok is false for null, which is never unique.
func valueKey(v any) (string, bool) {
	var k string
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		k = "s" + v
	case bool:
		k = "b" + strconv.FormatBool(v)
	case int64:
		k = "n" + strconv.FormatFloat(float64(v), 'g', -1, 64)
	case float64:
		k = "n" + strconv.FormatFloat(v, 'g', -1, 64)
	default:
		j, err := json.Marshal(v)
		if err != nil {
			return "", false
		}
		k = "j" + string(j)
	}
	if len(k) > 256 {
		sum := sha256.Sum256([]byte(k))
		k = "h" + hex.EncodeToString(sum[:])
	}
	return k, true
}

// uniqueValues returns the distinct non-null values a field value holds
// for a unique rule: the value itself, or a list's elements.
func uniqueValues(v any) map[string]any {
	out := map[string]any{}
	add := func(x any) {
		if k, ok := valueKey(x); ok {
			out[k] = x
		}
	}
	if l, ok := v.([]any); ok {
		for _, e := range l {
			add(e)
		}
	} else {
		add(v)
	}
	return out
}
