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
//     time. Session tokens are signed per instance (Sessions) with a key
//     of the key ring, which lives outside the store (keyring), and name
//     that key: a copy of the store signs nothing, rotation keeps them
//     valid and retiring their key ends them. They expire, and are
//     revoked by logout, a password change, or the account being
//     disabled. Where the instance sets an idle timeout, a session unused
//     that long ends too; its last use is kept on the account's record,
//     written at most once a minute per session (idle.go). An admin
//     session (Sessions.IssueAdmin, the admin API's gift to the console)
//     is a session token marked as such, of the instance's admin account:
//     it acts as the instance token on its instance, for 15 minutes, with
//     no idle expiry; marked for another account it is refused.
//   - Accounts: one rule says whether an account may act (Usable: not
//     trashed, not disabled), for sessions, logins and the session a
//     webhook runs with (SessionAs).
//   - Passwords are hashed with Argon2id (OWASP's parameters), at most one
//     hash per CPU at a time.
//   - Failed logins are throttled (Throttle, throttle.go) per client
//     address, per address and account, and per account, where a
//     back-off refuses only the addresses that have failed for the
//     account: a stranger slows guessing but cannot lock the owner out.
//     Counts are kept in bounded memory and, for processes sharing a
//     store, in the store (SharedFailures). The numbers and what they
//     allow: docs/login-throttling.md.
package auth
