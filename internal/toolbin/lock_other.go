//go:build !unix

package toolbin

// lockFile is a no-op where flock is missing: concurrent first builds then
// each build, and the last rename wins.
func lockFile(path string) (func(), error) { return func() {}, nil }
