// Package auth decides who a request's caller is and keeps accounts'
// secrets.
//
//   - Callers (Authenticate): the instance token (full access, acting as
//     the instance's admin account), a session token of one of the
//     instance's accounts, or nobody (Anonymous, allowed through only
//     where the instance permits it, decided by gql where the operation is
//     known). The engine (gql.Engine) calls it for every data request.
//   - Tokens are random 256-bit values of which only a SHA-256 hash is
//     kept (instance, admin and publishing tokens), compared in constant
//     time. Session tokens are signed per instance (Sessions), expire,
//     and are revoked by logout, a password change, or the account being
//     disabled.
//   - Accounts: one rule says whether an account may act (Usable: not
//     trashed, not disabled), for sessions, logins and the session a
//     webhook runs with (SessionAs).
//   - Passwords are hashed with Argon2id (OWASP's parameters), at most one
//     hash per CPU at a time; failed logins are throttled per account and
//     per client address (Throttle).
package auth
