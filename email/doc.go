// Package email is the /email door: the routes of Hypi's e-mail flows
// that name their instance in the path. POST /email/reset/{domain} with
// {"code", "password"} sets a password with a reset code (the GraphQL
// mutation resetPassword, which it runs as an anonymous caller). Like the
// other doors it reads and writes HTTP only: the engine does the work.
package email
