package main

import (
	"strings"
	"testing"
)

// The sanity checks on canned answers: each must reject what would make
// its scenario measure the wrong work.
func TestChecks(t *testing.T) {
	t.Parallel()
	in := instance{data: dataset{books: 100, authors: 10, perAuthor: 2}}
	edges := func(prices ...string) string {
		var e []string
		for _, p := range prices {
			e = append(e, `{"node":{"price":`+p+`}}`)
		}
		return `{"data":{"find":{"edges":[` + strings.Join(e, ",") + `]}}}`
	}
	noGet := func(string) (answer, error) { return answer{status: 500}, nil }
	cases := []struct {
		name   string
		check  func(checkCtx) error
		status int
		body   string
		id     string
		want   string // "" = passes; else a part of the error
	}{
		{"book as seeded", in.checkBook, 200, `{"data":{"find":{"edges":[{"node":{"title":"Book 3","authorid":3,"price":37.57}}]}}}`, "b3", ""},
		{"book with another title", in.checkBook, 200, `{"data":{"find":{"edges":[{"node":{"title":"Book 4","authorid":3,"price":2.37}}]}}}`, "b3", "want book b3"},
		{"book not found", in.checkBook, 404, `{"errors":[{"message":"Book b3 not found"}]}`, "b3", "HTTP 404"},
		{"errors with 200", in.checkBook, 200, `{"errors":[{"message":"boom"}],"data":null}`, "b3", "with errors"},
		{"list of 2 over 50", func(c checkCtx) error { return checkOver50(c.a, 2, nil) }, 200, edges("60", "51.5"), "", ""},
		{"list too short", func(c checkCtx) error { return checkOver50(c.a, 3, nil) }, 200, edges("60", "51.5"), "", "2 books, want 3"},
		{"list with a cheap book", func(c checkCtx) error { return checkOver50(c.a, 2, nil) }, 200, edges("60", "50"), "", "want all > 50"},
		{"sorted list out of order", func(c checkCtx) error { return checkOver50(c.a, 2, []float64{60, 51.5}) }, 200, edges("51.5", "60"), "", "descending"},
		{"created", checkCreated, 200, `{"data":{"upsert":[{"id":"01X"}]}}`, "", ""},
		{"created without id", checkCreated, 200, `{"data":{"upsert":[]}}`, "", "no data.upsert[0].id"},
		{"login", checkLogin, 200, `{"data":{"login":{"sessionToken":"cs1.x"}}}`, "", ""},
		{"login refused", checkLogin, 401, `{"data":{"login":{"sessionToken":null,"errorCode":"INVALID_CREDENTIALS"}}}`, "", "HTTP 401"},
		{"webhook", checkWebhook, 200, `{"ok":true,"bytes":23}`, "", ""},
		{"webhook of another function", checkWebhook, 200, `{"ok":true}`, "", "from the function"},
		{"update whose read-back fails", in.checkUpdated, 200, `{"data":{"upsert":[{"id":"b1"}]}}`, "b1", "reading book b1 back"},
		{"update of another record", in.checkUpdated, 200, `{"data":{"upsert":[{"id":"b2"}]}}`, "b1", `want "b1"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.check(checkCtx{a: answer{status: tc.status, body: []byte(tc.body)}, id: tc.id, get: noGet})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected failure: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
