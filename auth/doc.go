// Package auth decides who a request's caller is: the instance token
// (full access, acting as the instance's admin account), or nobody
// (anonymous, allowed through only where the instance permits it).
// Tokens are random 256-bit values of which only a SHA-256 hash is kept,
// and they are compared in constant time.
package auth
