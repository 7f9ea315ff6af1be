// Package fn runs the functions that schema fields are bound to with
// @fn(name, version, env), and keeps the published function packages and
// the instances' function logs (DESIGN.md, "Functions").
//
// # Runtime
//
// Runtime is the one interface callers use: Invoke runs one call and
// answers the function's result or a typed error (errors.go) that the
// caller maps for its clients: *FuncError carries the function's own
// {code, message}; *NotPublishedError says "function verify version v1 is
// not published"; *TimeoutError, *ExceptionError (one line, never a
// stack), *LimitError, *ResourceError (past its memory), ErrBusy
// (ErrShareBusy when the instance ran its share of calls, fairshare.go),
// ErrTooDeep and ErrClosed are the others.
// JS, the embedded JavaScript runtime on goja, is the default; its
// lifecycle is NewJS (validate the Config), Invoke, Close, and cmd/
// builds it. Gateway (gateway.go) runs functions delivered as container
// images by POSTing each call to an HTTP function gateway (OpenFaaS,
// Knative), and Router (router.go) sends a call to JS when the version
// has a package and to Gateway when the OCI registry (package oci) says
// its last push was a container image.
//
// # The function contract
//
// A function is a CommonJS module exporting main(input, callback):
//
//	exports.main = async function (input, callback) {
//	  const payload = JSON.parse(input.args.payload); // input objects arrive as JSON text
//	  const secret = input.env.STRIPE_SECRET;         // only the names the binding lists
//	  const who = input.core.account_id;              // also instance_id, domain, token
//	  callback({ status: 200 }, null);                // or callback(null, {code, message})
//	};
//
// The answer is the first callback's; without a callback, a value main
// returns (or a returned promise fulfils with) is the answer. A thrown
// exception, a rejected returned promise or no answer at all is an
// *ExceptionError, whose stack goes to the function log only. Results
// are encoded as JSON (bounded by Config.MaxResultBytes).
//
// A module may require the files of its own package ("./lib/x",
// "../data.json", node_modules it bundles) and crypto, buffer and util;
// nothing else. Absolute paths, paths climbing out of the package and
// Node's host modules (fs, child_process, process, net, http, …) fail
// with an error naming the module. There is no process, no timer, no
// file system and, unless the instance enables fetch, no network.
// Globals: console (to the function log), require, Buffer, fetch and
// core.
//
// # Isolation and bounds
//
// Every call runs on a goja runtime of its own, thrown away afterwards:
// no global, module state or Object.prototype change survives a call.
// goja builds its built-ins lazily, so a fresh runtime costs about 2 µs;
// a reused one would need every change undone, which no test can prove
// complete. What is pooled is what can be shared safely: the compiled
// modules of a package version (one require registry per (app, name,
// version, content digest), so a warm call never parses) and the worker
// goroutines (Config.MaxConcurrent at most). Measured on the 2-core
// development machine: a small function costs 40 to 60 µs of CPU per
// call (BenchmarkInvoke); a pool of runtimes built and warmed up ahead
// of calls cost up to twice the CPU per call without lowering latency,
// so it was dropped.
//
// Each call has a deadline (Config.Timeout, 5 s by default, or the
// caller's if sooner): goja's Interrupt stops JavaScript at once, even a
// loop of microtasks; native code it cannot stop (a backtracking regular
// expression) is killed with its worker process after a short grace (in
// process, without Config.Processes, it is abandoned and its worker
// goroutine freed when it returns), and regexp2's match timeout is set to
// the call timeout. Input,
// result, console output (per call and per line), call stack depth,
// fetches and core.graphql requests per call, and nesting of functions
// through core.graphql are bounded.
//
// # Memory: worker processes
//
// goja has no memory limit, so with Config.Processes (the default) calls
// run in worker processes: the binary started again with CORE_FN_WORKER
// set, which package fn's init turns into a worker (worker.go) before
// main runs. The caller's goroutine hands the call to an idle worker of
// the pool over a pipe (process.go; the frames are in wire.go), serves
// its requests (the package's files, core.graphql) and reads its answer.
// A worker runs one call at a time on a JS of its own, watches the heap
// the call adds (Config.Memory, or Invocation.Memory up to
// Config.MaxMemory) and stops it past the bound with a *ResourceError;
// RLIMIT_DATA ends a worker that allocates past MaxMemory faster than
// the watch sees, and the service answers the same error and starts
// another. The heap a call adds is measured from what the worker held
// after its last collection; a worker collects between calls after one
// that grew its heap by more than 4 MiB, so no call is measured from a
// heap that still counts the call before it. A call still running
// interruptGrace after its deadline, or whose caller went away, is
// killed with its worker. Console output crosses the pipe with the
// answer, so the function log is the same.
//
// Idle workers are bounded: a worker holding more than 16 MiB past its
// start size after a call says so with its answer and is ended; the
// Config.IdleWorkers (4) used last are kept up to a minute idle, the
// others Config.WorkerLinger (10 s). See docs/function-limits.md.
//
// # console and the function log
//
// console.log, info, debug, warn, error and trace write entries (time,
// level, name@version, call id, message) to the instance's function log
// (Log): a ring per instance in a store document, buffered in memory and
// flushed every second, read through the admin API. The runtime adds
// "runtime" entries: uncaught exceptions with their stack, time-outs,
// unhandled rejections, dropped output. Nothing reaches the service's own
// log.
//
// # require('crypto')
//
// Implemented in Go, for webhook verifiers (Stripe, GitHub, Slack, …):
//
//	createHmac(alg, key).update(data[, inputEncoding]).digest([encoding])
//	createHash(alg).update(data[, inputEncoding]).digest([encoding])
//	    alg: sha256, sha1, sha384, sha512, md5; encoding: hex, base64,
//	    base64url, latin1, or none for a Buffer
//	timingSafeEqual(a, b)   constant time; RangeError when lengths differ (as Node)
//	hmacSHA256(key, data[, encoding = 'hex']), hmacSHA1(…), hmacSHA512(…)
//	sha256(data[, encoding = 'hex']), sha1(…), sha512(…)
//	equal(a, b)             constant-time comparison; false when lengths differ
//	base64Encode(data), base64UrlEncode(data), base64Decode(text) -> string
//	hexEncode(data), hexDecode(text) -> string
//
// data and keys are strings (UTF-8), Buffers, typed arrays or
// ArrayBuffers.
//
// # fetch
//
// fetch(url, {method, headers, body, redirect}) returns a promise of
// {status, statusText, ok, url, redirected, headers.get/has/forEach,
// text(), json(), arrayBuffer()}. It works only for an instance whose
// FetchPolicy is enabled, only to hosts on its allow-list (on every
// redirect too), and never to a private, loopback, link-local or other
// non-public address: the dialer checks the address it connects to after
// DNS resolution, so a public name resolving to 127.0.0.1 is refused.
// Bodies, redirects, time and the number of fetches are bounded
// (Config.Fetch).
//
// # core.graphql
//
// core.graphql(query, variables) returns a promise of the instance's
// GraphQL response, executed in process as the caller when the host set
// Invocation.GraphQL (no network, so no loopback fetch is needed to store
// a record). Functions reached again through it count towards
// Config.MaxDepth.
//
// # core.verifyWebhook
//
// core.verifyWebhook(secret, payload[, {tolerance}]) verifies a request
// signed per Standard Webhooks (webhook-id, webhook-timestamp,
// webhook-signature; HMAC-SHA256 of "id.timestamp.body" with the key of
// a whsec_ secret) over the raw body the webhook received, and returns
// the body (parsed when JSON). It throws an Error with code
// missing_headers, stale_timestamp or future_timestamp (more than
// tolerance seconds off, 300 by default), bad_signature, or replay (an id
// this instance verified within its window; remembered by the service
// process, bounded per instance). webhookverify.go has the details.
//
// # Publishing
//
// Packages keeps function versions per app in store documents (a
// metadata document and the package split into 512 KiB chunks), so they
// live wherever the service's data does. ParseUpload accepts a .js
// source, a .zip or a .tar.gz (package.json main, default index.js) and
// refuses unsafe or oversized archives: absolute names, "..", links,
// devices, repeated names, too many files, too many bytes unpacked
// (decompression counted, not trusted). Every .js file must compile when
// published. A release may bind a version before it is published; calls
// answer "not published" until it is. Packages caches runnable packages
// (bounded by bytes) and re-checks the store once a second, so a version
// published or deleted through another process is seen within a second.
package fn
