//go:build tools

// Package tools pins the OCI distribution-spec conformance suite that
// oci's TestDistributionSpec builds (go test -c) and runs against cored.
package tools

import _ "github.com/opencontainers/distribution-spec/conformance"
