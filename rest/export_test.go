package rest

// CompareGolden lets the end-to-end tests (package rest_test) use the
// golden files of testdata/rest and the -update flag.
var CompareGolden = compareGolden
