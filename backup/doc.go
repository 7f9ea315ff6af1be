// Package backup writes and reads Core's archives: a backup of everything
// a store holds (Take, Restore), in one store-generic format, so a backup
// of the embedded store restores onto MongoDB and back.
//
// # Format
//
// An archive is a gzip-compressed tar of these entries, in this order:
//
//	manifest.json   {"format": "core-backup", "version": 1, "created": …,
//	                 "sections": ["docs", "instances"]}: what the archive
//	                 holds, section by section
//	docs/NNNNNN.ndjson
//	                one service document a line: {"kind", "key", "data"
//	                (base64)}: releases, instances (their env sealed),
//	                function packages, image blobs, … every kind the
//	                store holds
//	instances/<instance id>/records/NNNNNN.ndjson
//	                one record a line (record.go): type, id, created,
//	                updated, trashed, createdBy, impl, fields
//	instances/<instance id>/files/<file id>
//	                the content of a File record, streamed (Writer.Content,
//	                Entry.Body): an entry of the content's size, never
//	                held whole; thumbnails are left out (made again)
//	instances/<instance id>/counters.json
//	                {name: value}
//	SHA256SUMS      the SHA-256 of every other entry, as sha256sum -c
//	                reads it (after tar -xzf)
//
// NDJSON entries are cut at about 1 MiB (tar needs an entry's size before
// its bytes), so writing and reading hold one entry at most: memory does
// not grow with the store. Numbers keep their kind: a float is written
// with a decimal point or an exponent ("3.0"), an integer without.
//
// # Sections
//
// A section is a named part of the archive, listed in the manifest and
// owning the entries under its name. Restore refuses an archive naming a
// section it does not know, rather than lose its data. Data kept as
// service documents or records (an outbox, hooks,
// schedules) is in the "docs" and "instances" sections already; a part of
// the service that keeps data elsewhere adds a Section (sections.go).
//
// # Keys
//
// Nothing in an archive is in clear that the store keeps sealed: an
// instance's env is sealed with the key file's keys, and session signing
// keys are in the key file only. Carry the key file (core.keys) apart
// from the archive; a restored server opens the env and honours old
// sessions only with it.
package backup
