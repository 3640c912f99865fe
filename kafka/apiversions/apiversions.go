package apiversions

import (
	"regexp"

	"github.com/kgateway/kgateway/kafka/features"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Node is what ApiVersions tells about the node answering: who it is
// (KIP-1242), the keys it serves and the features it advertises.
type Node struct {
	ClusterID string
	NodeID    int32
	// Keys is the key list (the dispatch table's rows).
	Keys []kmsg.ApiVersionsResponseApiKey
	// Levels are the feature levels; Hidden the features not advertised
	// (cluster mode, no share groups without States, share groups in cluster mode).
	Levels *features.Levels
	Hidden func(feature string) bool
}

// Answer answers r at version. ok is false when the request was refused
// (INVALID_REQUEST, REBOOTSTRAP_REQUIRED: no keys); otherwise, from v3, the
// client's software name and version are valid and the caller may keep
// them (KIP-511).
func Answer(r *kmsg.ApiVersionsRequest, version int16, n Node) (resp *kmsg.ApiVersionsResponse, ok bool) {
	resp = r.ResponseKind().(*kmsg.ApiVersionsResponse)
	if version >= 5 && (r.ClusterID == nil) != (r.NodeID == -1) {
		resp.ErrorCode = kerr.InvalidRequest.Code // KIP-1242: both or neither
		return resp, false
	}
	if version >= 3 && (!validSoftware.MatchString(r.ClientSoftwareName) || !validSoftware.MatchString(r.ClientSoftwareVersion)) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, false
	}
	if version >= 5 && misrouted(r, n.ClusterID, n.NodeID) {
		resp.ErrorCode = kerr.RebootstrapRequired.Code
		return resp, false
	}
	resp.ApiKeys = n.Keys
	if version >= 3 {
		advertiseFeatures(resp, version, n.Levels, n.Hidden)
	}
	return resp, true
}

// misrouted reports whether a v5+ request names a cluster and node this
// server is not (KIP-1242); a request naming no cluster is never.
func misrouted(r *kmsg.ApiVersionsRequest, clusterID string, nodeID int32) bool {
	return r.ClusterID != nil && (*r.ClusterID != clusterID || r.NodeID != nodeID)
}

// validSoftware is what KIP-511 allows as a client software name or
// version.
var validSoftware = regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)

// advertiseFeatures fills the v3+ tagged feature fields from the
// finalized levels, but for those hidden in cluster mode (no share groups without States, share groups in cluster mode).
func advertiseFeatures(resp *kmsg.ApiVersionsResponse, version int16, levels *features.Levels, hidden func(string) bool) {
	for _, f := range levels.Supported() {
		if hidden(f.Name) {
			continue
		}
		sup := kmsg.NewApiVersionsResponseSupportedFeature()
		sup.Name, sup.MinVersion, sup.MaxVersion = f.Name, f.Min, f.Max
		if version < 4 && sup.MinVersion == 0 {
			sup.MinVersion = 1 // clients before v4 refuse a range starting at 0
		}
		resp.SupportedFeatures = append(resp.SupportedFeatures, sup)
	}
	finalized, epoch := levels.Finalized()
	for _, f := range finalized {
		if hidden(f.Name) {
			continue
		}
		fin := kmsg.NewApiVersionsResponseFinalizedFeature()
		fin.Name, fin.MinVersionLevel, fin.MaxVersionLevel = f.Name, f.Level, f.Level
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, fin)
	}
	if len(resp.SupportedFeatures) > 0 {
		resp.FinalizedFeaturesEpoch = epoch
	}
}

// Unsupported is the v0 answer to a too-new ApiVersions:
// UNSUPPORTED_VERSION with only the ApiVersions key, as Kafka answers
// (KIP-511), so the client retries at our maximum and gets the v3+ fields
// (features). A full key list would be used as is by franz-go, which then
// never learns the features.
// keys is the full key list, of which only ApiVersions' row is kept.
func Unsupported(keys []kmsg.ApiVersionsResponseApiKey) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	for _, k := range keys {
		if k.ApiKey == 18 {
			resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{k}
		}
	}
	return resp
}
