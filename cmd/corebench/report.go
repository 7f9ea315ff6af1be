package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// tableHeader is the header of the results table.
const tableHeader = "| scenario | requests | req/s | p50 ms | p95 ms | p99 ms | server CPU ms/req | server max RSS MB | failed | other CPU % |\n" +
	"|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n"

// formatTable renders rows as a markdown table.
func formatTable(rows []row) string {
	var b strings.Builder
	b.WriteString(tableHeader)
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %d | %s |\n",
			r.name, fmtInt(int64(r.requests)), fmtRate(r.rps), fmtMS(r.p50), fmtMS(r.p95), fmtMS(r.p99),
			fmtCPU(r.cpuPerReq), strings.TrimSuffix(fmtMB(r.rssKB), " MB"), r.failed, fmtPct(r.otherPct))
	}
	return b.String()
}

// markdown renders the whole report: what ran where, the table, memory.
func (r *report) markdown() string {
	var b strings.Builder
	c := r.cfg
	fmt.Fprintf(&b, "## corebench %s\n\n", r.started.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- cored %s, store %s, %s\n", r.srv.version, r.srv.store, r.srv.pinning)
	fmt.Fprintf(&b, "- machine: %s\n", r.machine)
	idx := "with an index on price"
	if c.noIndex {
		idx = "no index on price"
	}
	fmt.Fprintf(&b, "- data: %s books, %s authors with %d books each (%s), seeded in %.1f s; 1 account (Argon2id)\n",
		fmtInt(int64(c.data.books)), fmtInt(int64(c.data.authors)), c.data.perAuthor, idx, r.seeded.Seconds())
	fmt.Fprintf(&b, "- load: %d keep-alive connections, closed loop, fixed request counts (reads %s, writes %s, logins %s), random ids; CRUD with the instance token\n\n",
		c.conc, fmtInt(int64(c.reads)), fmtInt(int64(c.writes)), fmtInt(int64(c.logins)))
	b.WriteString(formatTable(r.rows))
	b.WriteString("\n")
	if len(r.sqlite) > 0 {
		fmt.Fprintf(&b, "Aggregations against SQLite on the same %s books (sqlite3 shell, CPU of the query alone, median of %d runs; cored: server CPU per request, HTTP included):\n\n",
			fmtInt(int64(c.data.books)), c.sqliteRuns)
		b.WriteString(sqliteTable(r.rows, r.sqlite))
		b.WriteString("\n")
	}
	if f := r.fanout; f != nil {
		fmt.Fprintf(&b, "Subscription fan-out: %s WebSockets (graphql-transport-ws) with one `subscribe(type: Book)` each; %s books created through POST /rest/v1 at up to %.0f/s, at most %d writes ahead of the slowest subscriber; latency from the write sent to the event read; memory per subscription = server VmRSS with them open and idle minus before, divided by their count:\n\n",
			fmtInt(int64(f.subscribers)), fmtInt(int64(f.writes)), c.fanout.rate, c.fanout.window)
		b.WriteString(fanoutTable(*f))
		b.WriteString("\n")
	}
	if ratio := floorRatio(r.rows); ratio != "" {
		b.WriteString(ratio)
	}
	busiest := -1
	for i, rw := range r.rows {
		if !math.IsNaN(rw.loadPct) && (busiest < 0 || rw.loadPct > r.rows[busiest].loadPct) {
			busiest = i
		}
	}
	if busiest >= 0 {
		fmt.Fprintf(&b, "The load generator used at most %s%% of a core (%s).\n", fmtPct(r.rows[busiest].loadPct), r.rows[busiest].name)
	}
	fmt.Fprintf(&b, "Server memory: peak RSS (VmHWM, whole run incl. seeding) %s; largest VmRSS sampled during the scenarios (every 100 ms) %s; VmRSS after seeding %s.\n",
		fmtMB(r.hwm), fmtMB(r.rssLoadMax), fmtMB(r.rssSeeded))
	for _, n := range r.notes {
		fmt.Fprintf(&b, "\nNote: %s", n)
	}
	if len(r.notes) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// floorRatio says how many times the floor's CPU per request (GET
// /healthz) a GET by id costs, when both ran and were measured.
func floorRatio(rows []row) string {
	var get, floor float64
	for _, r := range rows {
		switch r.name {
		case scGetBook:
			get = r.cpuPerReq
		case scFloor:
			floor = r.cpuPerReq
		}
	}
	if math.IsNaN(get) || math.IsNaN(floor) || get <= 0 || floor <= 0 {
		return ""
	}
	return fmt.Sprintf("GET by id costs %.1f× the floor (%s), in server CPU per request.\n", get/floor, scFloor)
}

// fmtInt writes n with thousands separators: 20,000.
func fmtInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtRate writes a throughput: whole numbers with separators from 100 up,
// one decimal below (login rates are small).
func fmtRate(rps float64) string {
	if rps >= 100 {
		return fmtInt(int64(math.Round(rps)))
	}
	return strconv.FormatFloat(rps, 'f', 1, 64)
}

// fmtMS writes a latency in milliseconds with about three significant
// digits.
func fmtMS(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 2, 64)
	case ms < 100:
		return strconv.FormatFloat(ms, 'f', 1, 64)
	default:
		return fmtInt(int64(math.Round(ms)))
	}
}

// fmtCPU writes CPU milliseconds per request; "-" when not measured.
func fmtCPU(ms float64) string {
	switch {
	case math.IsNaN(ms):
		return "-"
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 3, 64)
	default:
		return strconv.FormatFloat(ms, 'f', 1, 64)
	}
}

// fmtPct writes a percentage; "-" when not measured.
func fmtPct(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return strconv.FormatFloat(p, 'f', 0, 64)
}

// fmtMB writes kB as MB; "-" when not measured.
func fmtMB(kb int64) string {
	if kb < 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(kb)/1024, 'f', 1, 64) + " MB"
}
