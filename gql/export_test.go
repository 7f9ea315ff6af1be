package gql

// Unexported parts the external (end-to-end) tests use.

// CPUTime is cpuTime for the benchmarks of package gql_test.
var CPUTime = cpuTime

// UseReferenceOnly makes a schema run every document on graphql.Execute.
func UseReferenceOnly(s *Schema) { s.referenceOnly = true }
