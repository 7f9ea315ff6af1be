// Package keyring keeps the service's master keys outside its store, so
// that a copy of the database (a backup, a dump, a leaked file) holds
// nothing that signs a session or opens a secret.
//
//   - A Ring is a set of 256-bit master keys, each with an id, one of
//     them active. Rotate adds a new active key and keeps the others;
//     Retire removes one, and what was signed or sealed with it stops
//     verifying or opening.
//   - Each purpose uses its own sub-key, derived from a master key with
//     HKDF-SHA256 and a label (LabelSessions signs session tokens,
//     LabelSecrets seals stored secrets), so no key serves two purposes.
//   - A Sealer encrypts values kept in the store (instance env values, the
//     registry's upload secret) with AES-256-GCM: the key id and a random
//     nonce travel in the sealed value, and the caller's additional data
//     (the instance id and the field) binds it to its place.
//   - The key file is JSON (format "core-keyring-1"), readable by its owner
//     only: ReadFile refuses a file with any group or other permission
//     bit, as ssh does with a private key. WriteFile replaces it
//     atomically (a new file renamed over the old).
//   - A Keeper holds the ring a process uses and re-reads the file when it
//     changes (Watch), so `cored keys rotate` and `cored keys retire` take
//     effect in running servers without a restart.
//
// docs/keys-and-secrets.md is the operator's guide.
package keyring
