package main

import (
	"fmt"
	"slices"
	"strconv"
)

// The data set of ../shared/bench/gen-data.sh, the same rows for every
// target. Ids are ours, as in core.sh: book j is "b<j>", author k "a<k>".

// dataset is the size of the data set.
type dataset struct {
	books, authors int
	// perAuthor is the length of each author's booklist.
	perAuthor int
}

// defaultDataset is the benchmark's: 10,000 books, 1,000 authors with 5
// books each.
var defaultDataset = dataset{books: 10000, authors: 1000, perAuthor: 5}

// check reports a data set whose booklists would name missing books.
func (d dataset) check() error {
	if d.books < 1 || d.authors < 1 || d.perAuthor < 1 {
		return fmt.Errorf("the data set needs at least one book, one author and one book per author (got %d, %d, %d)", d.books, d.authors, d.perAuthor)
	}
	if d.authors*d.perAuthor > d.books {
		return fmt.Errorf("%d authors with %d books each need at least %d books, got %d", d.authors, d.perAuthor, d.authors*d.perAuthor, d.books)
	}
	return nil
}

// ref is a reference to a record by id, as upsert takes it.
type ref struct {
	Core coreID `json:"core"`
}

type coreID struct {
	ID string `json:"id"`
}

// book is a Book record as seeded.
type book struct {
	Core     coreID  `json:"core"`
	Title    string  `json:"title"`
	AuthorID int     `json:"authorid"`
	Price    float64 `json:"price"`
}

// author is an Author record as seeded.
type author struct {
	Core     coreID `json:"core"`
	Name     string `json:"name"`
	Age      int    `json:"age"`
	Bestbook ref    `json:"bestbook"`
	Booklist []ref  `json:"booklist"`
}

func bookID(j int) string   { return "b" + strconv.Itoa(j) }
func authorID(k int) string { return "a" + strconv.Itoa(k) }

// bookPrice is book j's price: ((j·7919) mod 10000)/100, so 0.00 to 99.99,
// all distinct over 10,000 books and 4,999 of them above 50.
func bookPrice(j int) float64 { return float64((j*7919)%10000) / 100 }

// book returns book j (1-based).
func (d dataset) book(j int) book {
	return book{
		Core:     coreID{bookID(j)},
		Title:    "Book " + strconv.Itoa(j),
		AuthorID: (j-1)%d.authors + 1,
		Price:    bookPrice(j),
	}
}

// author returns author k (1-based): its booklist is books k, k+authors,
// …, perAuthor of them (the first books whose authorid is k), its bestbook
// book k.
func (d dataset) author(k int) author {
	a := author{
		Core:     coreID{authorID(k)},
		Name:     "Author " + strconv.Itoa(k),
		Age:      20 + (k*37)%70,
		Bestbook: ref{coreID{bookID(k)}},
	}
	for i := range d.perAuthor {
		a.Booklist = append(a.Booklist, ref{coreID{bookID(k + i*d.authors)}})
	}
	return a
}

// bookIDs and authorIDs are the id lists the scenarios draw from.
func (d dataset) bookIDs() []string {
	ids := make([]string, d.books)
	for j := range ids {
		ids[j] = bookID(j + 1)
	}
	return ids
}

func (d dataset) authorIDs() []string {
	ids := make([]string, d.authors)
	for k := range ids {
		ids[k] = authorID(k + 1)
	}
	return ids
}

// topPrices returns the n highest book prices, highest first: what a
// `price > 50 SORT price DESC` page of n holds on a fresh data set.
func (d dataset) topPrices(n int) []float64 {
	var ps []float64
	for j := 1; j <= d.books; j++ {
		if p := bookPrice(j); p > 50 {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b float64) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	})
	return ps[:min(n, len(ps))]
}
