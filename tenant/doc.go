// Package tenant maps domains to instances: apps, their immutable releases
// (SDL, the model parsed from it and the schema compiled from that) and
// the instances that run them.
//
// The Registry is the one owner of that state. It persists every release
// and instance as a store document, compiles each release and shares the
// compiled schema among the instances running it, and answers
// Lookup(domain) from an immutable map behind an atomic pointer, so the
// request path takes no lock. Changes (admin API, deploy, --demo) are
// serialised, written to the store first, then published by swapping the
// map (copy-on-write). Moving an instance to another release swaps its
// release pointer: new requests see the new schema, requests in flight
// keep the *Release they loaded.
//
// Compiled schemas are bounded in memory; models are not (they are
// small). A compiled schema takes about 211 KiB, so a service holding
// 1,000 releases would keep about 206 MiB compiled; the registry keeps at
// most DefaultCompiledLimit (256) of them, about 54 MiB at worst, and
// evicts those asked for least recently. Release.Compiled builds an
// evicted one again from its model, once however many requests ask at the
// same moment; while compiled, it is an atomic load that takes no lock
// and does not allocate. A request keeps the schema it got until it ends,
// whatever is evicted meanwhile.
//
// Middleware resolves the core-domain header of a data request to its
// instance and puts it in the request context (WithInstance/FromContext).
package tenant
