package kafka

// ApiVersions (key 18), versions 0–5: the key list, the client's
// software name and version (v3, KIP-511), the features (v3) and the
// cluster and node the client means to reach (v5, KIP-1242); answered by
// kafka/apiversions. The response header is always v0 (conn.go).

import (
	"github.com/kgateway/kgateway/kafka/apiversions"
	"github.com/kgateway/kgateway/kafka/featuregate"
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
// (UpdateFeatures). group.version (KIP-848) and streams.version (KIP-1071)
// are supported 0–1, share.version (KIP-932) 0–2 (2: dead-letter queues,
// KIP-1191, kafka/share dlq.go; at most 1 in a cluster, which has none),
// each finalized at its max: at 0 their group protocol answers
// UNSUPPORTED_VERSION (kafka/featuregate).
const (
	transactionVersionFeature = "transaction.version"
	maxTransactionVersion     = 2
	shareVersionFeature       = featuregate.ShareVersion
	streamsVersionFeature     = featuregate.StreamsVersion
)

// featureSpecs are the features a node serves, in ApiVersions' order.
var featureSpecs = []features.Spec{
	{Name: featuregate.GroupVersion, Min: 0, Max: 1, Default: 1},
	{Name: shareVersionFeature, Min: 0, Max: 2, Default: 2},
	{Name: streamsVersionFeature, Min: 0, Max: 1, Default: 1},
	{Name: transactionVersionFeature, Min: 0, Max: maxTransactionVersion, Default: maxTransactionVersion},
}

// apiVersionsUnsupported is the v0 answer to a too-new ApiVersions
// (kafka/apiversions).
func apiVersionsUnsupported() *kmsg.ApiVersionsResponse { return apiversions.Unsupported(apiKeyList()) }

// apiKeyList advertises exactly the rows of the dispatch table (shared,
// read-only).
func apiKeyList() []kmsg.ApiVersionsResponseApiKey { return advertised }
