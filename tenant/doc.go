// Package tenant maps domains to instances: apps, their immutable releases
// (SDL and the model parsed from it) and the instances that run them.
//
// The Directory is the one owner of that state. It persists every release
// and instance as a store document, parses each release once and shares
// it among the instances running it, and answers Lookup(domain) (and
// Resolve, the core-domain rule of data requests) from an immutable map
// behind an atomic pointer, so the request path takes no lock. Changes
// (admin API, deploy, --demo) are serialised, written to the store first,
// then published by swapping the map (copy-on-write). Moving an instance
// to another release swaps its release pointer: new requests see the new
// schema, requests in flight keep the *Release they loaded.
//
// An instance's env values are secrets (webhook signing secrets, API
// keys): the store keeps them only sealed by the directory's Sealer
// (secrets.go), bound to the instance, and Reseal moves them to the key
// ring's active key after a rotation.
//
// The bounds of an instance's share of the server are enforced here, with
// the settings that state them: its rate limit (RateLimiter: per
// instance, per client address of the callers without a valid token, per
// webhook; divided among the processes on one store, Peers), its quotas
// (Quota, QuotaExceeded; the store enforces them inside a write) and its
// metered requests and function calls (Meter). The engine makes one call
// per request.
//
// Compiling a release's model into an executable schema is the engine's
// (gql.Engine), which keeps a bounded number compiled; tenant knows
// nothing of GraphQL execution.
package tenant
