package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Every node of a cluster reports one cluster id, the first node's
// (node.SharedClusterID), although each data directory keeps its own: a
// client that names the cluster it expects (ApiVersions v5, KIP-1242)
// is answered by every node, not sent back to its seeds.
func TestClusterNodesShareClusterID(t *testing.T) {
	c := newTestCluster(t)
	ids := map[string]int32{}
	for id := int32(1); id <= 2; id++ {
		s := c.start(id)
		cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addr().String()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(testCtx(t), cl)
		if err != nil || resp.ClusterID == nil {
			t.Fatalf("node %d metadata: %v", id, err)
		}
		ids[*resp.ClusterID] = id
		req := kmsg.NewPtrApiVersionsRequest()
		req.ClientSoftwareName, req.ClientSoftwareVersion = "kgw-test", "1"
		req.ClusterID, req.NodeID = resp.ClusterID, id
		av, err := req.RequestWith(testCtx(t), cl.SeedBrokers()[0]) // this node
		if err != nil || av.ErrorCode != 0 {
			t.Fatalf("node %d: ApiVersions v5 naming its cluster: %v, error %v", id, err, av)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("nodes report cluster ids %v, want one", ids)
	}
}
