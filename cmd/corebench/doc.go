// Command corebench is Core's load harness.
//
//	go run ./cmd/corebench [flags]        the load test: one markdown table
//	go run ./cmd/corebench scale [flags]  the scaling figures
//	corebench floor [-addr host:port]     a bare echo handler: the floor
//
// The load test builds cored from this checkout (go build into a temporary
// directory), starts `cored serve` on a fresh data directory pinned to one
// CPU with taskset and pins itself to the others (--target measures a
// running server instead). Through the admin API it publishes a small
// JavaScript function, a release of the Author/Book schema of
// ../shared/bench (Book with @indices(sets: [["price"]]); a Mutation field
// bound to the function with @fn) and an instance, then seeds the data set
// of ../shared/bench/gen-data.sh through POST /rest/v1 and creates one
// password account. Every scenario's request is sent once and its answer
// checked (the checks of scenarios-core.tsv, made exact); a failing check
// stops the run and names the request and the answer. Then each scenario
// gets a fixed number of requests over a fixed number of keep-alive
// connections (a closed loop, as wrk runs), and the table gives req/s,
// p50/p95/p99, the server's CPU per request (/proc/<pid>/stat), its
// largest RSS, and the CPU other processes took meanwhile.
//
// The load generator is its own: an HTTP/1.1 client on raw TCP
// connections that writes prebuilt request bytes and reads just the
// status and body (httpconn.go), so it costs a small fraction of the
// server's CPU. Latencies go to a log-linear histogram (histogram.go).
//
// The subscription fan-out (fanout.go) opens --subscribers WebSockets
// (graphql-transport-ws), each subscribed to Book changes, then creates
// books at up to --sub-rate a second, never more than --sub-window ahead
// of the slowest subscriber, and reports events/s, delivery latency,
// server CPU per event and memory per idle subscription in a table of
// its own.
//
// --ferretdb starts the tests' MongoDB-wire server (tools/ferretdb, built
// through internal/toolbin) pinned with the load generator and cored on
// it (over SQLite files, or over a PostgreSQL database with
// --ferretdb-postgresql); --processes N starts N cored on one port (cored serve
// --reuse-port) and sums their CPU and memory.
//
// `scale` starts a fresh cored per part and measures get and indexed find
// at growing record counts, the build time of a 50-type schema, and the
// memory of many instances of one release and of many distinct releases.
//
// The package's quick test runs the harness against the in-process server
// of server/servertest with tiny counts; the end-to-end test, which builds
// and starts cored, runs only with -e2e.
package main
