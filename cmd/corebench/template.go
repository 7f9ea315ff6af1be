package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// A template is a request path or body with the placeholders of
// ../shared/bench/scenario.lua: {id} (an id of the scenario's id list),
// {n} (the request's sequence number, so created titles are unique) and
// {r:K} (an integer from 1 to K). Other braces (GraphQL, JSON) are text.
type template []part

type partKind uint8

const (
	partText partKind = iota
	partID
	partSeq
	partRand
)

type part struct {
	kind partKind
	text string // partText
	k    int    // partRand: the upper bound
}

// parseTemplate splits s into text and placeholders.
func parseTemplate(s string) (template, error) {
	var t template
	text := func(x string) {
		if x == "" {
			return
		}
		if n := len(t); n > 0 && t[n-1].kind == partText {
			t[n-1].text += x
			return
		}
		t = append(t, part{kind: partText, text: x})
	}
	for s != "" {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			text(s)
			break
		}
		text(s[:i])
		s = s[i:]
		switch {
		case strings.HasPrefix(s, "{id}"):
			t = append(t, part{kind: partID})
			s = s[len("{id}"):]
		case strings.HasPrefix(s, "{n}"):
			t = append(t, part{kind: partSeq})
			s = s[len("{n}"):]
		case strings.HasPrefix(s, "{r:"):
			end := strings.IndexByte(s, '}')
			k, err := strconv.Atoi(s[len("{r:"):max(end, len("{r:"))])
			if end < 0 || err != nil || k < 1 {
				return nil, fmt.Errorf("template %q: {r:K} wants a positive integer K", s)
			}
			t = append(t, part{kind: partRand, k: k})
			s = s[end+1:]
		default:
			text("{")
			s = s[1:]
		}
	}
	return t, nil
}

// mustTemplate is parseTemplate for the harness's own, fixed templates.
func mustTemplate(s string) template {
	t, err := parseTemplate(s)
	if err != nil {
		panic(err)
	}
	return t
}

// has reports whether the template holds a placeholder of kind k.
func (t template) has(k partKind) bool {
	for _, p := range t {
		if p.kind == k {
			return true
		}
	}
	return false
}

// values fill a template's placeholders for one request. A nil rng gives
// the fixed request of the sanity checks (and of hey in run-scenarios.sh):
// {r:K} is K.
type values struct {
	id  string
	seq int64
	rng *rand.Rand
}

// appendTo appends the template filled with v to dst.
func (t template) appendTo(dst []byte, v values) []byte {
	for _, p := range t {
		switch p.kind {
		case partText:
			dst = append(dst, p.text...)
		case partID:
			dst = append(dst, v.id...)
		case partSeq:
			dst = strconv.AppendInt(dst, v.seq, 10)
		case partRand:
			r := p.k
			if v.rng != nil {
				r = 1 + v.rng.IntN(p.k)
			}
			dst = strconv.AppendInt(dst, int64(r), 10)
		}
	}
	return dst
}

// String returns the template filled with the fixed values (id "{id}").
func (t template) String() string {
	return string(t.appendTo(nil, values{id: "{id}", seq: 1}))
}
