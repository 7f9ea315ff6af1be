// Package oci is the service's own container registry, where
// functions are delivered as images tagged {name}:{version} (SERVICE.md
// section 4.4, point 5). What runs a pushed function lives in fn: the
// JavaScript runtime for images with a package, fn.Gateway for container
// images, and fn.Router choosing between them (it asks the Registry which
// versions are containers, through fn.Containers).
//
// # The registry
//
// Registry serves the OCI Distribution API at /v2/ on cored's listener,
// so docker, podman, buildah, crane and skopeo push and pull as they do
// with any registry: chunked, resumable and monolithic uploads, digest
// checks, manifests, image indexes and tags, cross-repository mounts,
// error codes. Each group of endpoints is a small handler of its own
// (api_blobs.go, api_uploads.go, api_manifests.go, api_tags.go, and
// referrers.go), answering as the reference registry's HTTP layer does,
// over the reference registry's storage
// (github.com/distribution/distribution/v3/registry/storage: what a
// manifest names is checked, blobs are linked per repository, tags and
// deletions kept as distribution lays them out). The HTTP layer itself
// (registry/handlers) is not used: it brings tracing exporters, gRPC and
// a Redis client into the binary for features cored has no use for
// (internal/archtest/weight_test.go keeps them out).
//
// The storage runs over a driver of our own, docfs, which keeps blobs,
// manifests and upload sessions in the service's store documents: the
// embedded store or MongoDB, shared by every cored process on it. A layer
// is streamed to 1 MiB chunks as it arrives (and hashed on the way, for
// the digest check); no request holds a whole layer in memory.
// go-containerregistry's pkg/registry was the other candidate: it takes a
// blob handler of ours, but keeps manifests only in memory and buffers
// chunked uploads in memory, so images would neither survive a restart
// nor be shared by processes.
//
// # Names
//
// A repository is {app}/{name}: the app, then the function. A tag is a
// function version. So `docker push host:8080/bookstore/verify-stripe:v1`
// delivers version v1 of the function verify-stripe of the app
// bookstore, which a field bound with @fn(name: "verify-stripe",
// version: "v1") runs. Names follow the rule of every name
// (internal/names: 1 to 64 letters, digits, '.', '_' and '-') and, for
// apps and functions, the lowercase of container references. Paths with other repository shapes answer
// NAME_INVALID; tags that are not versions, TAG_INVALID.
//
// # Who may push and pull
//
// Every request, pulls included, needs HTTP basic credentials: user
// "core" and, as password, the admin token (every app) or a publishing
// token of the app (Tokens: issued, listed and revoked through
// /admin/v1/apps/{app}/registry/tokens; the store keeps only their
// SHA-256). Without them the answer is 401 with `WWW-Authenticate: Basic
// realm="core"`, the challenge clients answer by logging in; a token used
// on another app's repository answers 403 DENIED. The catalog
// (/v2/_catalog) names every app's functions and is the admin's only. A
// cross-repository mount from another app's repository becomes an
// ordinary upload.
//
// # Artifacts, referrers and digests (OCI Distribution 1.1)
//
// A manifest that is an artifact (an artifactType, or a config that is
// not an image's) is stored as any registry would and is no function
// (push.go). A manifest with a subject is answered with OCI-Subject and
// listed by GET /v2/{app}/{name}/referrers/{digest}, read from the
// repository's manifests each time (referrers.go). Blobs and manifests
// pushed by a digest other than sha256 answer that digest; distribution
// keeps them under their sha256 and a link under the other (digests.go,
// pushDigest). Non-distributable layers (urls) are accepted.
//
// # Tags
//
// A version, once pushed, stays the image it is: pushing another image
// under an existing tag answers TAG_INVALID, saying how to allow it,
// unless the app's setting allowTagOverwrite is on (PATCH
// /admin/v1/apps/{app}/registry). Pushing the same image again is always
// allowed. Deleting a tag (or the manifest it names) removes the function
// version published from it.
//
// # Running an image
//
// When a tag is pushed, the image (for an index: its linux/amd64 image,
// else another linux one) is read for its function: its layers are
// applied in order as a container runtime would (gzip, zstd or plain tar;
// a later layer's file replaces an earlier one; whiteouts and opaque
// directories hide what is below) and the regular files under /function
// are kept. An image with /function/package.json or /function/index.js is
// a JavaScript function: its files are checked as a package uploaded
// through the admin API is (bounds, no links, every module compiles; a
// bad one refuses the push with the reason) and published as the
// version's package (fn.Packages), which the embedded runtime runs. Doing
// this at push time rather than at call time keeps layer reading off the
// call path, reuses what packages already have (the bounded cache, the
// re-check of the store every second that makes every process see a new
// push within a second, the admin API's view), and leaves one answer to
// "what runs for name@version": the last publication, by push or by the
// admin API.
//
// Any other image is a container function: the push removes the
// version's JavaScript package, if any, and fn.Router hands its calls to
// the container engine, fn.Gateway (an OpenFaaS-style or Knative HTTP
// gateway, configured with cored serve --function-gateway; off by
// default). Without an engine, such a call answers NO_CONTAINER_ENGINE,
// saying so.
//
// # Garbage
//
// Collect removes the manifests no tag reaches any more (the images a tag
// pointed at before it was overwritten or deleted), the blobs no manifest
// references, and aborted uploads. Blobs and untagged manifests younger
// than the grace (an hour) are kept, so that a push in progress on any
// process loses nothing. cored collects every six hours; POST
// /admin/v1/registry/gc collects now (and tells what it removed).
//
// Aborted uploads are swept on their own, every 15 minutes
// (SweepUploads): an unfinished upload that received nothing for 45
// minutes is removed, so what an abandoned push sent is gone within an
// hour of its last byte, while a slow upload that keeps sending stays.
//
// # Usage
//
// Usage counts what an app's repositories hold (GET
// /admin/v1/apps/{app}/usage): repositories, manifests, tags, and the
// distinct blobs they link with their bytes, each blob once however many
// of the app's repositories or digests link it; unfinished uploads apart.
// It reads the app's repositories only.
//
// # Bounds
//
// Config.MaxRequestBytes per upload request (1 GiB; the server's
// --body-limit does not apply to /v2/), Config.TransferTimeout per blob
// transfer (30 minutes, instead of the server's read and write time-outs),
// 4 MiB per manifest, Config.MaxImageBytes decompressed per inspected
// image (4 GiB), and fn.PackagesConfig for the function read from it. A
// request declaring more than its bound is refused before its body is
// read, and a manifest's descriptors must declare their blobs' sizes
// (sizes.go).
package oci
