package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A fetch from a replica (ReplicaID >= 0 before v15, ReplicaState's id
// from v15, KIP-903) is not a consumer's: no node follows this one, and a
// single-node Apache Kafka 4.4 broker answers every partition
// NOT_LEADER_OR_FOLLOWER with no bounds and empty records, its own node
// id included (checked against a real broker at v11, v15 and v16).
func TestFetchFromReplicaNotAFollower(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"f": 1})
	g.produce("f", 0)
	topic, _ := g.s.cfg.Resolver.Topic("f")
	for _, v := range []int16{4, 11, 12, 13, 14, 15, 16, 17, 18} {
		for _, replica := range []int32{-1, 0, 5} {
			req := fetchReq(0, -1, []fetchPart{{topic: "f"}}, nil)
			req.SetVersion(v)
			req.ReplicaID = replica
			if v >= 15 {
				req.ReplicaID, req.ReplicaState.ID = -1, replica // KIP-903
			}
			if v >= 13 {
				req.Topics[0].TopicID = topic.ID
			}
			p := onlyPartition(t, g.fetch(req))
			if replica < 0 {
				if p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
					t.Fatalf("v%d consumer: code %d, %d bytes", v, p.ErrorCode, len(p.RecordBatches))
				}
				continue
			}
			if p.ErrorCode != kerr.NotLeaderForPartition.Code || p.HighWatermark != -1 || p.RecordBatches == nil || len(p.RecordBatches) != 0 {
				t.Fatalf("v%d replica %d: code %d hwm %d, %d bytes", v, replica, p.ErrorCode, p.HighWatermark, len(p.RecordBatches))
			}
		}
	}
}
