// Package tenant maps domains to instances: apps, their immutable releases
// (SDL plus the schema compiled from it) and the instances that run them.
//
// The Registry is the one owner of that state. It persists every release
// and instance as a store document, compiles each release once and shares
// the compiled schema among the instances running it, and answers
// Lookup(domain) from an immutable map behind an atomic pointer, so the
// request path takes no lock. Changes (admin API, deploy, --demo) are
// serialised, written to the store first, then published by swapping the
// map (copy-on-write). Moving an instance to another release swaps its
// release pointer: new requests see the new schema, requests in flight
// keep the *Release they loaded.
//
// Middleware resolves the core-domain header of a data request to its
// instance and puts it in the request context (WithInstance/FromContext).
package tenant
