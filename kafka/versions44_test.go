package kafka

// The versions Apache Kafka 4.4 added to APIs kgateway already served,
// field by field, on the wire (raw requests at an exact version). The
// end-to-end ones (topic ids in Produce, OffsetCommit, OffsetFetch and
// TxnOffsetCommit; the transaction APIs) are in test/versions44_test.go.

import (
	"encoding/base64"
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ApiVersions v5 (KIP-1242): a client naming this cluster and node gets
// the key list; naming another cluster or another node gets
// REBOOTSTRAP_REQUIRED and no keys; naming only one of the two is
// INVALID_REQUEST (Kafka's ApiVersionsRequest.isValid). Without either,
// and before v5, nothing is checked.
func TestApiVersionsV5ClusterAndNode(t *testing.T) {
	s := startServer(t, Config{ClusterID: "kgw-cluster", NodeID: 3})
	c := dialRaw(t, s.Addr())
	for _, tc := range []struct {
		name    string
		version int16
		cluster *string
		node    int32
		code    int16
	}{
		{"this cluster and node", 5, kmsg.StringPtr("kgw-cluster"), 3, 0},
		{"neither", 5, nil, -1, 0},
		{"another cluster", 5, kmsg.StringPtr("other"), 3, kerr.RebootstrapRequired.Code},
		{"another node", 5, kmsg.StringPtr("kgw-cluster"), 4, kerr.RebootstrapRequired.Code},
		{"cluster without node", 5, kmsg.StringPtr("kgw-cluster"), -1, kerr.InvalidRequest.Code},
		{"node without cluster", 5, nil, 3, kerr.InvalidRequest.Code},
		{"v4 does not carry them", 4, kmsg.StringPtr("other"), 9, 0},
	} {
		req := apiVersionsReq(tc.version)
		req.ClusterID, req.NodeID = tc.cluster, tc.node
		resp := ask(c, req).(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode != tc.code {
			t.Errorf("%s: error %d, want %d", tc.name, resp.ErrorCode, tc.code)
		}
		if (tc.code == 0) != (len(resp.ApiKeys) > 0) {
			t.Errorf("%s: %d keys with error %d", tc.name, len(resp.ApiKeys), resp.ErrorCode)
		}
	}
}

// Metadata v13 carries a top-level error code (KIP-1102); like Kafka 4.4,
// kgateway never sets it.
func TestMetadataV13ErrorCode(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"m": 1})
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(13)
	resp := ask(g.c, req).(*kmsg.MetadataResponse)
	named := false
	for _, mt := range resp.Topics {
		named = named || (mt.Topic != nil && *mt.Topic == "m" && mt.ErrorCode == 0)
	}
	if resp.ErrorCode != 0 || !named || len(resp.Brokers) != 1 {
		t.Fatalf("v13: error %d, topics %d (m among them: %v), %d brokers", resp.ErrorCode, len(resp.Topics), named, len(resp.Brokers))
	}
}

// ListOffsets v10 carries a timeout (KIP-1075), answered at once; v11's
// -6, the earliest offset pending upload (KIP-1023), is UNSUPPORTED_VERSION
// before v11 and -1 without an object tier, as Kafka answers a topic
// without remote storage; the usual lookups answer at v10 and v11 alike.
func TestListOffsetsV10V11(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"lo": 1})
	g.produce("lo", 0)
	g.produce("lo", 0)
	for _, v := range []int16{10, 11} {
		if p := g.listOffsetAt("lo", v, -1); p.ErrorCode != 0 || p.Offset != 2 {
			t.Errorf("v%d latest: error %d offset %d", v, p.ErrorCode, p.Offset)
		}
		if p := g.listOffsetAt("lo", v, -2); p.ErrorCode != 0 || p.Offset != 0 {
			t.Errorf("v%d earliest: error %d offset %d", v, p.ErrorCode, p.Offset)
		}
	}
	if p := g.listOffsetAt("lo", 10, -6); p.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Errorf("v10 -6: error %d, want UNSUPPORTED_VERSION", p.ErrorCode)
	}
	if p := g.listOffsetAt("lo", 11, -6); p.ErrorCode != 0 || p.Offset != -1 || p.Timestamp != -1 || p.LeaderEpoch != -1 {
		t.Errorf("v11 -6 without a tier: error %d offset %d timestamp %d epoch %d, want 0 -1 -1 -1", p.ErrorCode, p.Offset, p.Timestamp, p.LeaderEpoch)
	}

	// The timeout field is on the wire at v10: a request carrying one is
	// answered like any other.
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(10)
	req.ReplicaID, req.TimeoutMillis = -1, 1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "lo"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	if p := ask(g.c, req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.Offset != 2 {
		t.Errorf("v10 with a 1 ms timeout: error %d offset %d", p.ErrorCode, p.Offset)
	}
}

// FindCoordinator v6 share keys (KIP-932): no share-state coordinator is
// served, so a well-formed key is COORDINATOR_NOT_AVAILABLE (as Kafka
// answers while it has no share-state topic) and a malformed one
// INVALID_REQUEST.
func TestFindCoordinatorV6ShareKeys(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"fc": 1})
	topic, _ := g.s.cfg.Resolver.Topic("fc")
	id := topicIDString(topic.ID)
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.SetVersion(6)
	req.CoordinatorType = coordinatorShare
	keys := map[string]int16{
		"g:" + id + ":0":   kerr.CoordinatorNotAvailable.Code,
		"g:" + id + ":x":   kerr.InvalidRequest.Code,
		"g:not-an-id:0":    kerr.InvalidRequest.Code,
		":" + id + ":0":    kerr.InvalidRequest.Code,
		"no colons at all": kerr.InvalidRequest.Code,
	}
	for k := range keys {
		req.CoordinatorKeys = append(req.CoordinatorKeys, k)
	}
	resp := ask(g.c, req).(*kmsg.FindCoordinatorResponse)
	if len(resp.Coordinators) != len(keys) {
		t.Fatalf("%d coordinators for %d keys", len(resp.Coordinators), len(keys))
	}
	for _, co := range resp.Coordinators {
		if co.ErrorCode != keys[co.Key] || co.NodeID != -1 || co.ErrorMessage == nil {
			t.Errorf("key %q: error %d node %d message %v, want error %d node -1", co.Key, co.ErrorCode, co.NodeID, co.ErrorMessage, keys[co.Key])
		}
	}
}

// topicIDString is a topic id as Kafka prints it (URL-safe base64,
// unpadded).
func topicIDString(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// Share-state keys need CLUSTER_ACTION on the cluster, as in Kafka: only
// brokers look them up; a group's DESCRIBE is not enough.
func TestFindCoordinatorShareKeyNeedsClusterAction(t *testing.T) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.SetVersion(6)
	req.CoordinatorType = coordinatorShare
	req.CoordinatorKeys = []string{"g:AAAAAAAAAAAAAAAAAAAAAA:0"}
	rc := authzConn(t, "User:alice", acl(auth.ResourceGroup, "g", auth.OpDescribe))
	answer, _ := rule(10)(rc, req)
	resp, ok := answer.(*kmsg.FindCoordinatorResponse)
	if !ok || len(resp.Coordinators) != 1 || resp.Coordinators[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("without CLUSTER_ACTION: %+v", answer)
	}
	rc = authzConn(t, "User:alice", acl(auth.ResourceCluster, auth.ClusterName, auth.OpClusterAction))
	if answer, after := rule(10)(rc, req); answer != nil || after != nil {
		t.Fatalf("with CLUSTER_ACTION: answered %+v", answer)
	}
}

// DescribeCluster v2 (KIP-1073): with IncludeFencedBrokers the brokers
// are the same live ones, each IsFenced false (nothing is fenced here).
func TestDescribeClusterV2(t *testing.T) {
	s := startServer(t, Config{ClusterID: "kgw", NodeID: 2})
	c := dialRaw(t, s.Addr())
	for _, include := range []bool{false, true} {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.SetVersion(2)
		req.EndpointType, req.IncludeFencedBrokers = endpointTypeBrokers, include
		resp := ask(c, req).(*kmsg.DescribeClusterResponse)
		if resp.ErrorCode != 0 || len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 2 || resp.Brokers[0].IsFenced {
			t.Errorf("include fenced %v: error %d brokers %+v", include, resp.ErrorCode, resp.Brokers)
		}
	}
}
