// Package admin serves the platform admin API, /admin/v1: publishing
// releases of apps and creating, reading, changing and deleting the
// instances that run them (DESIGN.md, "Admin API and CLI"). It is a thin
// HTTP edge over tenant.Directory: it checks the admin token, decodes
// strict JSON bodies (a single object, no unknown fields) and renders
// answers; every rule about releases and instances lives in the directory.
//
// Sessions (session.go) issues the console an instance's admin session:
// with the admin token, a 15-minute token that acts as that instance's
// token, so that the console never needs the instance token.
//
// Every failure answers the errcode envelope; an invalid schema answers one
// entry per problem, each with its line and column.
package admin
