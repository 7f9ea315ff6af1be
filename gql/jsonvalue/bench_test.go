package jsonvalue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// benchBodies are POST /rest/v1 bodies creating books (the shape of
// testdata/rest/rewrite.golden and rest's benchmarks): one record, and a
// batch of 250.
var benchBodies = []struct {
	name string
	body []byte
}{
	{"create", bookBody(1)},
	{"batch250", bookBody(250)},
}

func bookBody(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"values":{"Book":[`)
	for j := 1; j <= n; j++ {
		if j > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"core":{"id":"b%05d"},"title":"Book %d","authorid":%d,"price":%g}`,
			j, j, (j-1)%100+1, float64((j*7919)%10000)/100)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// benchDecoders are Decode and what it replaces: the Decoder.Token loop
// rest used to refuse duplicate keys (tokenLoopDecode), and the lenient
// json.Unmarshal /graphql used.
var benchDecoders = []struct {
	name   string
	decode func([]byte) (any, error)
}{
	{"jsonvalue", func(b []byte) (any, error) { return Decode(b, 64) }},
	{"tokenloop", tokenLoopDecode},
	{"unmarshal", func(b []byte) (v any, err error) { return v, json.Unmarshal(b, &v) }},
}

func BenchmarkDecode(b *testing.B) {
	for _, body := range benchBodies {
		for _, dec := range benchDecoders {
			b.Run(body.name+"/"+dec.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(body.body)))
				for b.Loop() {
					if _, err := dec.decode(body.body); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestBenchDecodersAgree keeps the benchmark honest: the three decoders
// give the same value for the bodies measured.
func TestBenchDecodersAgree(t *testing.T) {
	t.Parallel()
	for _, body := range benchBodies {
		want, err := Decode(body.body, 64)
		if err != nil {
			t.Fatal(err)
		}
		for _, dec := range benchDecoders[1:] {
			got, err := dec.decode(body.body)
			if err != nil {
				t.Fatalf("%s: %v", dec.name, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s (-jsonvalue +%s):\n%s", body.name, dec.name, dec.name, diff)
			}
		}
	}
}

// tokenLoopDecode is rest's decodeJSON before this package, kept as the
// benchmark's baseline.
func tokenLoopDecode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	v, err := tokenLoopValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more data after the JSON value at byte %d", dec.InputOffset())
	}
	return v, nil
}

func tokenLoopValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, float64, bool or nil
	}
	if depth >= 64 {
		return nil, fmt.Errorf("nested deeper than %d levels", 64)
	}
	switch d {
	case '{':
		m := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := kt.(string) // the decoder allows only strings as keys
			if _, dup := m[key]; dup {
				return nil, fmt.Errorf("duplicate key %q", key)
			}
			if m[key], err = tokenLoopValue(dec, depth+1); err != nil {
				return nil, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return m, nil
	default: // '['
		l := []any{}
		for dec.More() {
			v, err := tokenLoopValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return l, nil
	}
}
