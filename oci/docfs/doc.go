// Package docfs is a storage driver of the distribution registry
// (github.com/distribution/distribution/v3) over the service's store
// documents, so that the blobs, manifests and upload sessions of the
// function image registry live wherever the service's data lives: the
// embedded store or MongoDB, shared by every cored process on it.
//
// # Layout
//
// The registry sees a file system of paths such as
// /docker/registry/v2/blobs/sha256/ab/ab12…/data. docfs keeps one entry
// document per file or directory, in a kind named after the directory
// that holds it ("imgfs" + the directory with ':' for '/', for example
// "imgfs:docker:registry:v2") and keyed by the entry's base name, so that
// listing a directory reads that directory's entries only. An entry is
// small: a directory marker, or a file's size, modification time and
// either its content inline (small files written whole: links, hash
// states) or the id of its content chunks. Content is kept in
// ChunkSize pieces in the kind "imgfs-data" under "<content id>/<index>":
// a writer holds at most one chunk in memory, whatever the size of the
// blob, and a reader reads one chunk at a time.
//
// Moving a file (how the registry commits an upload) rewrites its entry
// under the new name and leaves the chunks where they are. Writing a
// file creates the entries of its missing parent directories.
//
// # Consistency
//
// A store document is replaced as a whole, and there is no transaction
// across documents: an entry is written after its chunks, so a reader
// never sees an entry whose content is missing, and chunks are removed
// after the entry that named them. Two processes deleting a directory
// while a third writes into it may leave documents no entry names; the
// registry's garbage collection and upload purging work above this layer
// and do not depend on that never happening.
package docfs
