package arcql

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMeaning covers every row of the Meaning table of docs/arcql.md, and the
// paths section, end to end over the sample records of helpers_test.go.
func TestMeaning(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		typ   string
		query string
		want  []string // in core.id order, or the query's SORT order
	}{
		// f = v / f != v
		{"eq string", "Book", "title = 'Inferno'", []string{"B1"}},
		{"eq is case-sensitive", "Book", "title = 'inferno'", []string{}},
		{"eq list some element", "Author", "tags = 'english'", []string{"Author1", "Author5"}},
		{"eq list field holding a scalar", "Author", "tags = 'spanish'", []string{"Author6"}},
		{"ne list no element", "Author", "tags != 'english'", []string{"Author2", "Author4", "Author6"}},
		{"ne matches missing", "Book", "price != 5.99", []string{"B2", "B4", "B5"}},
		{"eq null is not exist", "Author", "age = null", []string{"Author4", "Author5"}},
		{"ne null is exist", "Author", "age != NULL", []string{"Author1", "Author2", "Author6"}},
		{"eq null on empty list", "Author", "booklist = null", []string{"Author5", "Author6"}},
		{"eq bool", "Author", "active = true", []string{"Author1"}},
		{"eq bool quoted", "Author", "active = 'false'", []string{"Author2"}},
		{"ne bool", "Author", "active != true", []string{"Author2", "Author4", "Author5", "Author6"}},
		{"eq enum", "Author", "genre = 'FICTION'", []string{"Author1"}},
		{"eq int across int int64", "Book", "authorid = 2", []string{"B2", "B4"}},
		{"eq int across int64 float64", "Book", "authorid = 1", []string{"B3", "B5"}},
		{"eq quoted number coerced", "Book", "authorid = '2'", []string{"B2", "B4"}},
		{"eq number exponent", "Book", "price = 1.25e1", []string{"B2"}},
		{"eq string field with number", "Book", "title = 5", []string{}},
		{"eq float with int64 value", "Book", "price = 30", []string{"B4"}},
		// ordered
		{"gt int", "Author", "age > 60", []string{"Author1", "Author6"}},
		{"lt never matches missing or null", "Author", "age < 100", []string{"Author1", "Author2", "Author6"}},
		{"le float", "Book", "price <= 12.5", []string{"B1", "B2", "B3"}},
		{"ge int64 vs float literal", "Book", "price >= 30.0", []string{"B4"}},
		{"lt strings bytewise", "Book", "title < 'B'", []string{"B2"}},
		{"gt strings bytewise upper before lower", "Author", "name > 'a'", []string{}},
		{"ordered list some element", "Author", "tags > 'f'", []string{"Author1", "Author6"}},
		{"lt metadata time", "Book", "core.created < '2026-01-01T00:00:00Z'", []string{"B1"}},
		{"le metadata time with offset", "Book", "core.created <= '2026-01-01T01:00:00+01:00'", []string{"B1", "B2"}},
		{"gt metadata date only", "Book", "core.created > '2026-02-01'", []string{"B4", "B5"}},
		{"datetime field chronological, not textual", "Book", "published > '1987-12-31T23:59:59.999Z'", []string{"B2", "B3"}},
		{"datetime field equal in another form", "Book", "published = '1988-01-01T00:00:00.500Z'", []string{"B2"}},
		{"datetime field stored with offset", "Book", "published <= '2002-06-01T10:00:00Z'", []string{"B1", "B2", "B3"}},
		{"trashed", "Book", "core.trashed > '2026-01-01T00:00:00Z'", []string{"B4"}},
		// ~
		{"words all present any case", "Author", "name ~ 'MURTY sudha'", []string{"Author1"}},
		{"words all must occur", "Author", "name ~ 'sudha coelho'", []string{}},
		{"words unicode case", "Author", "name ~ 'PÉREZ'", []string{"Author6"}},
		{"words punctuation separates", "Author", "name ~ 'reverte, arturo 2nd'", []string{"Author6"}},
		{"words whole words only", "Author", "name ~ 'Sud'", []string{}},
		{"words list element", "Author", "tags ~ 'ENGLISH'", []string{"Author1", "Author5"}},
		{"words on a number: 12.5 has words 12 and 5", "Book", "price ~ 12", []string{"B2"}},
		{"words on a number text", "Book", "price ~ '12.5'", []string{"B2"}},
		// ^
		{"prefix", "Author", "name ^ 'Will'", []string{"Author5"}},
		{"prefix case-sensitive", "Author", "name ^ 'will'", []string{}},
		{"prefix unicode", "Author", "name ^ 'Pé'", []string{"Author6"}},
		{"prefix number text", "Book", "price ^ '5.9'", []string{"B1", "B3"}},
		{"prefix number literal", "Book", "price ^ 12", []string{"B2"}},
		{"prefix int", "Book", "authorid ^ 4", []string{"B1"}},
		{"prefix datetime", "Book", "published ^ '19'", []string{"B2"}},
		{"prefix metadata time", "Book", "core.created ^ '2026-02'", []string{"B3", "B4", "B5"}},
		{"prefix id", "Author", "core.id ^ 'Author'", []string{"Author1", "Author2", "Author4", "Author5", "Author6"}},
		// *
		{"wildcard star", "Author", "name * 'P*'", []string{"Author2", "Author6"}},
		{"wildcard whole value", "Author", "name * 'Paulo'", []string{}},
		{"wildcard suffix", "Author", "name * '*o'", []string{"Author2"}},
		{"wildcard question", "Author", "name * 'Dante?Alighieri'", []string{"Author4"}},
		{"wildcard question is one character", "Author", "name * 'P?rez*'", []string{"Author6"}},
		{"wildcard case-sensitive", "Author", "name * 'd*'", []string{}},
		{"wildcard star alone", "Book", "title * '*'", []string{"B1", "B2", "B3", "B4"}},
		{"wildcard regexp chars are literal", "Book", "title * 'O.R*'", []string{}},
		{"wildcard number", "Book", "price * '?.99'", []string{"B1", "B3"}},
		// IN
		{"range exclusive inclusive", "Author", "age IN (50, 70]", []string{"Author1"}},
		{"range inclusive", "Author", "age IN [50, 70]", []string{"Author1", "Author2"}},
		{"range exclusive", "Author", "age IN (50, 70)", []string{}},
		{"range half open", "Book", "price IN [5.99, 12.5)", []string{"B1", "B3"}},
		{"range strings", "Book", "title IN ['A', 'J')", []string{"B1", "B2"}},
		{"range dates", "Author", "born IN ['1947-01-01', '1951-01-01')", []string{"Author1", "Author2"}},
		{"range empty", "Author", "age IN [70, 50]", []string{}},
		// EXIST
		{"exist", "Author", "EXIST age", []string{"Author1", "Author2", "Author6"}},
		{"exist null is absent", "Book", "EXIST title", []string{"B1", "B2", "B3", "B4"}},
		{"exist empty list is absent", "Author", "EXIST booklist", []string{"Author1", "Author2", "Author4"}},
		{"not exist", "Author", "NOT EXIST tags", []string{"Author2", "Author4"}},
		{"exist metadata", "Book", "EXIST core.trashed", []string{"B4"}},
		{"exist object", "Author", "EXIST address", []string{"Author1"}},
		// *
		{"all", "Author", "*", []string{"Author1", "Author2", "Author4", "Author5", "Author6"}},
		{"all in an expression", "Author", "* AND age > 60", []string{"Author1", "Author6"}},
		{"not all", "Author", "NOT *", []string{}},
		// boolean structure
		{"and", "Author", "age >= 50 AND name ^ 'P'", []string{"Author2", "Author6"}},
		{"or", "Author", "age = 50 OR name ^ 'W'", []string{"Author2", "Author5"}},
		{"not", "Author", "NOT age >= 50", []string{"Author4", "Author5"}},
		{"precedence and over or", "Author", "age = 50 OR age = 70 AND name ^ 'X'", []string{"Author2"}},
		{"parentheses", "Author", "(age = 50 OR age = 70) AND name ^ 'S'", []string{"Author1"}},
		// paths
		{"metadata createdBy", "Book", "core.createdBy = 'Account1'", []string{"B1", "B2", "B3", "B4", "B5"}},
		{"instanceId this instance", "Book", "core.instanceId = 'inst1'", []string{"B1", "B2", "B3", "B4", "B5"}},
		{"instanceId another instance", "Book", "core.instanceId = 'inst2' OR title = 'Inferno'", []string{"B1"}},
		{"embedded object", "Author", "address.city = 'Bangalore'", []string{"Author1"}},
		{"embedded object int", "Author", "address.zip > 500000", []string{"Author1"}},
		{"list of embedded objects", "Author", "homes.city = 'Hubli'", []string{"Author1"}},
		{"json value", "Author", "data.n = 3", []string{"Author1"}},
		{"json value no coercion", "Author", "data.n = '3'", []string{"Author4"}},
		{"json through a list", "Author", "data.list.k = 'b'", []string{"Author1"}},
		{"json missing key", "Author", "EXIST data.nope", []string{}},
		{"ref by id", "Author", "bestbook = 'B3'", []string{"Author1"}},
		{"list ref by id", "Author", "booklist = 'B1'", []string{"Author1", "Author4"}},
		{"hop", "Author", "bestbook.title = 'Inferno'", []string{"Author4"}},
		{"hop ne: no referenced record equals", "Author", "bestbook.title != 'Inferno'", []string{"Author1", "Author2", "Author5", "Author6"}},
		{"hop list some element", "Author", "booklist.price > 10", []string{"Author2", "Author4"}},
		{"hop list ne", "Author", "booklist.price != 5.99", []string{"Author2", "Author5", "Author6"}},
		{"hop eq null", "Author", "bestbook.title = null", []string{"Author5", "Author6"}},
		{"hop exist", "Author", "EXIST booklist.core.trashed", []string{"Author4"}},
		{"hop to metadata", "Author", "bestbook.core.created >= '2026-01-01'", []string{"Author1", "Author2"}},
		{"two hops", "Author", "bestbook.author.name ~ 'sudha'", []string{"Author1"}},
		{"hop in object", "Author", "address.owner.name ^ 'Paulo'", []string{"Author1"}},
		{"field named like a keyword", "Author", "desc = 'writer' SORT desc DESC", []string{"Author1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _ := run(t, tt.query, tt.typ)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}
