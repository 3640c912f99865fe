package kafka

// ApiVersions (key 18), versions 0–3.
//
//   v0  the key list.
//   v1  throttle time.
//   v2  nothing new.
//   v3  flexible; the client sends its software name and version.
//
// A request at a version above 3 is answered in the v0 format with
// UNSUPPORTED_VERSION and the full key list (KIP-511): the client then
// retries at our maximum. The response header is always v0 (conn.go).
// Left out: feature flags (SupportedFeatures, FinalizedFeatures) and
// validating the client software name.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleApiVersions(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	resp := req.(*kmsg.ApiVersionsRequest).ResponseKind().(*kmsg.ApiVersionsResponse)
	resp.ApiKeys = apiKeyList()
	return resp, nil
}

// apiVersionsUnsupported is the v0 answer to a too-new ApiVersions.
func apiVersionsUnsupported() *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.ApiKeys = apiKeyList()
	return resp
}

// apiKeyList advertises exactly the rows of the dispatch table (shared,
// read-only).
func apiKeyList() []kmsg.ApiVersionsResponseApiKey { return advertised }
