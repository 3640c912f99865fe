package kafka

// ApiVersions (key 18), versions 0–5: the key list, the client's
// software name and version (v3, KIP-511), the features (v3) and the
// cluster and node the client means to reach (v5, KIP-1242); answered by
// kafka/apiversions. The response header is always v0 (conn.go).

import (
	"github.com/kgateway/kgateway/kafka/apiversions"
	"github.com/kgateway/kgateway/kafka/features"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleApiVersions(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ApiVersionsRequest)
	resp, ok := apiversions.Answer(r, rc.version, apiversions.Node{ClusterID: s.cfg.ClusterID, NodeID: s.cfg.NodeID,
		Keys: s.apiKeyList(), Levels: s.features, Hidden: s.featureHidden})
	if ok && rc.version >= 3 {
		rc.conn.software.Store(&[2]string{r.ClientSoftwareName, r.ClientSoftwareVersion})
	}
	return resp, nil
}

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

// apiVersionsUnsupported is the v0 answer to a too-new ApiVersions
// (kafka/apiversions).
func apiVersionsUnsupported() *kmsg.ApiVersionsResponse { return apiversions.Unsupported(apiKeyList()) }

// apiKeyList advertises exactly the rows of the dispatch table (shared,
// read-only).
func apiKeyList() []kmsg.ApiVersionsResponseApiKey { return advertised }
