package tenant

import "errors"

// Sentinels for the conditions callers branch on. The Directory returns them
// inside an *errcode.Error whose message is meant for the client, so the
// admin API answers it as is; errors.Is finds the sentinel.
var (
	// ErrNotFound: the app, release or instance does not exist.
	ErrNotFound = errors.New("tenant: not found")
	// ErrExists: an instance already has the domain.
	ErrExists = errors.New("tenant: already exists")
	// ErrReleaseInUse: a release an instance runs would change.
	ErrReleaseInUse = errors.New("tenant: release in use")
	// ErrBreaking: a release swap would break stored records.
	ErrBreaking = errors.New("tenant: breaking change")
	// ErrInvalid: a name, setting or schema is not acceptable.
	ErrInvalid = errors.New("tenant: invalid")
)
