package backup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corehq/core/store"
)

// recordLine is a record as an archive holds it: its core metadata and
// its fields.
type recordLine struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Created   time.Time      `json:"created"`
	Updated   time.Time      `json:"updated"`
	Trashed   *time.Time     `json:"trashed,omitempty"`
	CreatedBy string         `json:"createdBy,omitempty"`
	Impl      string         `json:"impl,omitempty"`
	Fields    map[string]any `json:"fields"`
}

// lineOf is the line of a record: floats written so that they read back
// as floats.
func lineOf(r *store.Record) recordLine {
	f := make(map[string]any, len(r.Fields))
	for k, v := range r.Fields {
		f[k] = keepKind(v)
	}
	return recordLine{Type: r.Type, ID: r.ID, Created: r.Created, Updated: r.Updated, Trashed: r.Trashed,
		CreatedBy: r.CreatedBy, Impl: r.Impl, Fields: f}
}

// keepKind returns v with every float64 as a json.Number holding a
// decimal point or an exponent, which store.NormalizeValue reads back as
// a float64 (an integer-looking number would become an int64).
func keepKind(v any) any { return store.MapValue(v, floatAsNumber) }

// floatAsNumber returns a float64 as a json.Number that reads back as a
// float (it always has a point or an exponent); other values as they are.
func floatAsNumber(v any) any {
	f, ok := v.(float64)
	if !ok {
		return v
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") { // n: NaN and Inf, which Marshal refuses
		s += ".0"
	}
	return json.Number(s)
}

// parseRecord reads one record line.
func parseRecord(line []byte) (*store.Record, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var l recordLine
	if err := dec.Decode(&l); err != nil {
		return nil, err
	}
	if l.Type == "" || l.ID == "" {
		return nil, fmt.Errorf("a record needs a type and an id")
	}
	return &store.Record{Type: l.Type, ID: l.ID, Created: l.Created, Updated: l.Updated, Trashed: l.Trashed,
		CreatedBy: l.CreatedBy, Impl: l.Impl, Fields: l.Fields}, nil
}

// lines calls fn with each non-empty line of an NDJSON entry and its
// number (from 1).
func lines(data []byte, fn func(n int, line []byte) error) error {
	n := 0
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		n++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	return nil
}
