//go:build tools

// Package tools pins protoc-gen-connect-openapi, the buf plugin that writes gen/openapi/ from the
// contract's google.api.http annotations. test/rest/install-openapi-plugin.sh builds it from here
// (go.sum verifies every module), so CI and every developer get the same generator.
package tools

import _ "github.com/sudorandom/protoc-gen-connect-openapi"
