package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The aggregation scenarios compared with SQLite on the same rows: the
// books as seeded, in a table with an index on price as cored has, the
// queries run by the sqlite3 command-line shell (Debian's package), each
// `runs` times with `.timer on`. SQLite's time is the CPU (user + sys)
// the shell reports for the query alone, median of the runs; its real time
// is printed in whole milliseconds only, too coarse here. cored's is the
// server CPU per request of the scenario's row, HTTP, GraphQL and JSON
// included.

// sqliteQuery is one SQLite query standing for a scenario.
type sqliteQuery struct {
	scenario string
	sql      string
}

// sqliteQueries are the queries of the issue: the group-by's rows go to
// /dev/null (.output), so printing them is not what is measured.
var sqliteQueries = []sqliteQuery{
	{scAggregate, "SELECT avg(price), sum(price), count(*) FROM books WHERE price > 50;"},
	{scGroupBy, "SELECT authorid, avg(price), sum(price), count(*) FROM books GROUP BY authorid ORDER BY authorid;"},
}

// sqliteRow is the SQLite figure of one scenario.
type sqliteRow struct {
	scenario string
	sql      string
	cpuMS    float64 // median CPU per query
}

// runSQLite loads d's books into a new database under dir with the
// sqlite3 shell bin and times each query runs times.
func runSQLite(ctx context.Context, bin, dir string, d dataset, runs int) ([]sqliteRow, error) {
	db := filepath.Join(dir, "books.sqlite")
	_ = os.Remove(db)
	var load bytes.Buffer
	load.WriteString("BEGIN;\nCREATE TABLE books (id TEXT PRIMARY KEY, title TEXT, authorid INTEGER, price REAL);\n")
	for j := 1; j <= d.books; j++ {
		b := d.book(j)
		fmt.Fprintf(&load, "INSERT INTO books VALUES ('%s', '%s', %d, %s);\n", b.Core.ID, b.Title, b.AuthorID, strconv.FormatFloat(b.Price, 'f', -1, 64))
	}
	load.WriteString("CREATE INDEX books_price ON books (price);\nCOMMIT;\nANALYZE;\n")
	if out, err := sqlite(ctx, bin, db, &load); err != nil {
		return nil, fmt.Errorf("loading the books into SQLite: %w: %s", err, out)
	}
	var rows []sqliteRow
	for _, q := range sqliteQueries {
		var script bytes.Buffer
		script.WriteString(".output /dev/null\n.timer on\n")
		for range runs {
			script.WriteString(q.sql + "\n")
		}
		out, err := sqlite(ctx, bin, db, &script)
		if err != nil {
			return nil, fmt.Errorf("timing %q in SQLite: %w: %s", q.sql, err, out)
		}
		times, err := runTimes(out)
		if err != nil {
			return nil, fmt.Errorf("timing %q in SQLite: %w", q.sql, err)
		}
		if len(times) != runs {
			return nil, fmt.Errorf("timing %q in SQLite: %d timings for %d runs: %s", q.sql, len(times), runs, out)
		}
		slices.Sort(times)
		rows = append(rows, sqliteRow{scenario: q.scenario, sql: q.sql, cpuMS: times[len(times)/2]})
	}
	return rows, nil
}

// sqlite runs the shell on db with script as its input.
func sqlite(ctx context.Context, bin, db string, script *bytes.Buffer) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, "-batch", db)
	cmd.Stdin = script
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// runTimes reads the shell's timer lines, "Run Time: real R user U sys S",
// as U+S in milliseconds.
func runTimes(out []byte) ([]float64, error) {
	var times []float64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 8 || f[0] != "Run" || f[1] != "Time:" || f[4] != "user" || f[6] != "sys" {
			continue
		}
		user, err1 := strconv.ParseFloat(f[5], 64)
		sys, err2 := strconv.ParseFloat(f[7], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("a timer line that is not numbers: %q", sc.Text())
		}
		times = append(times, (user+sys)*1000)
	}
	return times, sc.Err()
}

// sqliteTable renders the comparison: cored's CPU per request of each
// scenario that ran beside SQLite's per query.
func sqliteTable(rows []row, lite []sqliteRow) string {
	var b strings.Builder
	b.WriteString("| scenario | SQLite query | SQLite CPU ms/query | cored server CPU ms/req | ratio |\n|---|---|--:|--:|--:|\n")
	for _, l := range lite {
		i := slices.IndexFunc(rows, func(r row) bool { return r.name == l.scenario })
		if i < 0 {
			continue
		}
		ratio := math.NaN()
		if l.cpuMS > 0 {
			ratio = rows[i].cpuPerReq / l.cpuMS
		}
		fmt.Fprintf(&b, "| %s | `%s` | %.3f | %s | %s |\n", l.scenario, l.sql, l.cpuMS, fmtCPU(rows[i].cpuPerReq), fmtRatio(ratio))
	}
	return b.String()
}

// fmtRatio writes x.yz, or "-" for NaN.
func fmtRatio(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "-"
	}
	return strconv.FormatFloat(r, 'f', 2, 64)
}
