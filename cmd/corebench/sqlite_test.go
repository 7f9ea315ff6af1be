package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestSQLite loads a small data set into a real sqlite3 shell, reads the
// rows back, and times both queries. CI installs Debian's sqlite3 and
// sets CORE_TEST_REQUIRE_SQLITE so that the test cannot pass by skipping.
func TestSQLite(t *testing.T) {
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		if os.Getenv("CORE_TEST_REQUIRE_SQLITE") != "" {
			t.Fatalf("no sqlite3 shell: %v (apt-get install sqlite3)", err)
		}
		t.Skip("no sqlite3 shell on this machine (apt-get install sqlite3)")
	}
	d := dataset{books: 60, authors: 10, perAuthor: 5}
	dir := t.TempDir()
	rows, err := runSQLite(t.Context(), bin, dir, d, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(sqliteQueries) {
		t.Fatalf("%d rows, want %d", len(rows), len(sqliteQueries))
	}
	for i, r := range rows {
		if r.scenario != sqliteQueries[i].scenario || r.cpuMS < 0 {
			t.Errorf("row %d: %+v", i, r)
		}
	}

	// The table holds the data set's books.
	out, err := sqlite(t.Context(), bin, dir+"/books.sqlite", bytes.NewBufferString("SELECT count(*), round(sum(price), 2), count(DISTINCT authorid) FROM books WHERE price > 50;\n"))
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	n, sum := 0, 0.0
	authors := map[int]bool{}
	for j := 1; j <= d.books; j++ {
		if b := d.book(j); b.Price > 50 {
			n, sum = n+1, sum+b.Price
			authors[b.AuthorID] = true
		}
	}
	f := strings.Split(strings.TrimSpace(string(out)), "|")
	got, _ := strconv.ParseFloat(f[1], 64)
	if len(f) != 3 || f[0] != strconv.Itoa(n) || !near(got, sum) || f[2] != strconv.Itoa(len(authors)) {
		t.Errorf("SQLite holds %q, want %d books over 50 summing %.2f by %d authors", out, n, sum, len(authors))
	}

	// The comparison table puts cored's row beside SQLite's.
	table := sqliteTable([]row{{name: scAggregate, cpuPerReq: 2}}, []sqliteRow{{scenario: scAggregate, sql: "SELECT 1;", cpuMS: 0.5}})
	if !strings.Contains(table, "| j_aggregate_price_gt_50 | `SELECT 1;` | 0.500 | 2.000 | 4.00 |") {
		t.Errorf("table:\n%s", table)
	}
}

func TestRunTimes(t *testing.T) {
	got, err := runTimes([]byte("1|2\nRun Time: real 0.001 user 0.000700 sys 0.000100\nRun Time: real 0.000 user 0.000050 sys 0.000000\n"))
	if err != nil || len(got) != 2 || !near(got[0], 0.8) || !near(got[1], 0.05) {
		t.Errorf("runTimes: %v %v, want [0.8 0.05]", got, err)
	}
}
