package auth

// Kind is who is calling.
type Kind int

const (
	// Anonymous: no token.
	Anonymous Kind = iota
	// InstanceAdmin: the instance token; full access, acts as the instance's
	// admin account.
	InstanceAdmin
	// User: a session token of an account of the instance.
	User
)

// Principal is the caller of a request.
type Principal struct {
	Kind Kind
	// AccountID is the account acted as (empty for Anonymous).
	AccountID string
	// Session is the session id of a User's token.
	Session string
}
