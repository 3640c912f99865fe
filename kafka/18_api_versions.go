package kafka

// ApiVersions (key 18), versions 0–5.
//
//   v0  the key list.
//   v1  throttle time.
//   v2  nothing new.
//   v3  flexible; the client sends its software name and version; the
//       feature transaction.version is advertised, supported 0–2 and
//       finalized at 2 (KIP-890 part 2, transaction version 2), so clients
//       run their transactions at version 2. A supported range's
//       minimum of 0 is reported as 1, as Kafka does before v4.
//   v4  nothing new on the wire; a supported range may start at 0
//       (KAFKA-17011).
//   v5  the client may name the cluster and node it means to reach
//       (KIP-1242): both or neither (a cluster id without a node id,
//       or a node id without a cluster id, is INVALID_REQUEST); a
//       cluster id that is not this cluster's, or a node id that is not
//       this node's, is answered REBOOTSTRAP_REQUIRED with no keys, as
//       Kafka answers, so a client whose metadata maps an address to the
//       wrong broker rediscovers the cluster from its seeds.
//
// The feature share.version (KIP-932) is advertised too, supported 1–1
// and finalized at 1, as Kafka 4.2 enables share groups by default; Kafka
// lists the share-group APIs (76–79, 90–92) only while it is finalized
// at 1 or more, and here it always is (kafka/share). UpdateFeatures
// (57_update_features.go) changes the finalized levels, which persist
// in the data directory (kafka/features); the epoch counts the changes.
//
// The feature streams.version (KIP-1071) is advertised, supported 0–1 and
// finalized at 1, as Kafka 4.4 does: the streams group APIs (88, 89) are
// served (kafka/streams), and a Streams client uses group.protocol=streams
// only while the feature is finalized.
//
// In cluster mode (Config.Cluster, no share groups without States) none of these features is
// advertised, nor the transaction, share-group and streams-group APIs.
//
// A request at a version above 5 is answered in the v0 format with
// UNSUPPORTED_VERSION and the ApiVersions key alone (KIP-511): the client
// then retries at our maximum. The response header is always v0 (conn.go).
// From v3 the client's software name and version must match
// [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? (KIP-511); otherwise the
// answer is INVALID_REQUEST with no keys, as Kafka's.
// Left out: every other feature (metadata.version, group.version, ...).
// A feature finalized at 0 is not listed, as in Kafka.

import (
	"regexp"

	"github.com/kgateway/kgateway/kafka/features"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleApiVersions(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ApiVersionsRequest)
	resp := r.ResponseKind().(*kmsg.ApiVersionsResponse)
	if rc.version >= 5 && (r.ClusterID == nil) != (r.NodeID == -1) {
		resp.ErrorCode = kerr.InvalidRequest.Code // KIP-1242: both or neither
		return resp, nil
	}
	if rc.version >= 3 && (!validSoftware.MatchString(r.ClientSoftwareName) || !validSoftware.MatchString(r.ClientSoftwareVersion)) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	if rc.version >= 5 && misrouted(r, s.cfg.ClusterID, s.cfg.NodeID) {
		resp.ErrorCode = kerr.RebootstrapRequired.Code
		return resp, nil
	}
	resp.ApiKeys = s.apiKeyList()
	if rc.version >= 3 {
		rc.conn.software.Store(&[2]string{r.ClientSoftwareName, r.ClientSoftwareVersion})
		advertiseFeatures(resp, rc.version, s.features, s.featureHidden)
	}
	return resp, nil
}

// misrouted reports whether a v5+ request names a cluster and node this
// server is not (KIP-1242); a request naming no cluster is never.
func misrouted(r *kmsg.ApiVersionsRequest, clusterID string, nodeID int32) bool {
	return r.ClusterID != nil && (*r.ClusterID != clusterID || r.NodeID != nodeID)
}

// validSoftware is what KIP-511 allows as a client software name or
// version.
var validSoftware = regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)

// The transaction.version feature (KIP-890): 2 means clients run their
// transactions at version 2 (EndTxn bumps the epoch, Produce and
// TxnOffsetCommit add to the transaction implicitly); 1 and 0 make them
// run version 1, with AddPartitionsToTxn. kgateway serves both by
// request version (kafka/txn), so any level may be finalized
// (UpdateFeatures). share.version is supported at 1 only: kgateway's
// share groups cannot be turned off, so a downgrade is refused.
const (
	transactionVersionFeature = "transaction.version"
	maxTransactionVersion     = 2
	shareVersionFeature       = "share.version"
	maxShareVersion           = 1
	streamsVersionFeature     = "streams.version"
	maxStreamsVersion         = 1
)

// featureSpecs are the features a node serves, in ApiVersions' order.
// streams.version is supported 0–1 as in Kafka: at 0 the streams group
// APIs answer UNSUPPORTED_VERSION (88_streams_group_heartbeat.go).
var featureSpecs = []features.Spec{
	{Name: shareVersionFeature, Min: 1, Max: maxShareVersion, Default: maxShareVersion},
	{Name: streamsVersionFeature, Min: 0, Max: maxStreamsVersion, Default: maxStreamsVersion},
	{Name: transactionVersionFeature, Min: 0, Max: maxTransactionVersion, Default: maxTransactionVersion},
}

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

// apiVersionsUnsupported is the v0 answer to a too-new ApiVersions:
// UNSUPPORTED_VERSION with only the ApiVersions key, as Kafka answers
// (KIP-511), so the client retries at our maximum and gets the v3+ fields
// (features). A full key list would be used as is by franz-go, which then
// never learns the features.
func apiVersionsUnsupported() *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	for _, k := range apiKeyList() {
		if k.ApiKey == apiKeyApiVersions {
			resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{k}
		}
	}
	return resp
}

// apiKeyList advertises exactly the rows of the dispatch table (shared,
// read-only).
func apiKeyList() []kmsg.ApiVersionsResponseApiKey { return advertised }
