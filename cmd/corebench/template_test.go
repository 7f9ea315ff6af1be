package main

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestTemplateFixedValues(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"/rest/v1/Book/{id}", "/rest/v1/Book/b7"},
		{`{"title":"bench book {n}","price":{r:100}}`, `{"title":"bench book 3","price":100}`},
		{`{"query":"{ find(type: Book) { edges { cursor } } }"}`, `{"query":"{ find(type: Book) { edges { cursor } } }"}`},
		{"{id}{n}{r:5}{", "b735{"},
		{"no placeholders", "no placeholders"},
		{"", ""},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			tpl, err := parseTemplate(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(tpl.appendTo(nil, values{id: "b7", seq: 3})); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTemplateRandomValues(t *testing.T) {
	t.Parallel()
	tpl := mustTemplate("{r:3}")
	rng := rand.New(rand.NewPCG(1, 1))
	seen := map[string]bool{}
	for range 200 {
		seen[string(tpl.appendTo(nil, values{rng: rng}))] = true
	}
	if len(seen) != 3 || !seen["1"] || !seen["2"] || !seen["3"] {
		t.Errorf("{r:3} gave %v, want each of 1, 2, 3", seen)
	}
	if !mustTemplate("/x/{id}").has(partID) || mustTemplate("/x/{n}").has(partID) {
		t.Error("has(partID) is wrong")
	}
}

func TestTemplateErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"{r:0}", "{r:x}", "{r:5"} {
		if _, err := parseTemplate(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestRequestBytes(t *testing.T) {
	t.Parallel()
	r := newRequest("127.0.0.1:1", "PUT", mustTemplate("/rest/v1"), mustTemplate(`{"id":"{id}","p":{r:9}}`), []string{"b1"},
		[][2]string{{"core-domain", "bench.test"}, {"authorization", ""}})
	got, _ := r.build(nil, nil, values{id: "b1", seq: 1})
	body := `{"id":"b1","p":9}`
	want := "PUT /rest/v1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\ncore-domain: bench.test\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if string(got) != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	get := newRequest("h", "GET", mustTemplate("/x"), nil, nil, nil)
	if got, _ := get.build(nil, nil, values{}); string(got) != "GET /x HTTP/1.1\r\nHost: h\r\n\r\n" || strings.Contains(string(got), "Content") {
		t.Errorf("GET request %q", got)
	}
}
