package arcql

// Quote returns s as an ArcQL string literal: single-quoted, with quotes,
// backslashes and control characters escaped, so that Parse reads back
// exactly s. It lets a caller put a value into a filter text without that
// value being read as syntax (the REST interface builds
// `core.id = <Quote(id)>` this way). s must be valid UTF-8: an invalid
// byte becomes U+FFFD. A NUL is quoted as \u0000, which Parse refuses: no
// filter matches a NUL.
func Quote(s string) string { return quote(s) }
