module github.com/catalog/tools/oaclint

go 1.24

// The platform's chart validator at the version beclab/market requires (its go.mod). The Go module proxy answered
// this version with "403 Forbidden: This module version is not available" on 2026-12-06, so there is no go.sum yet:
// `go mod tidy` writes it once the proxy serves the module (README.md "The platform's validator").
require github.com/beclab/Olares/framework/oac v0.0.0-20260509033324-899cba323495
