package kafka

// AlterReplicaLogDirs (key 34), versions 1–2 (Kafka 4 removed v0,
// KIP-896).
//
//   v1  nothing new.   v2  flexible.
//
// Answered as a Kafka broker with one log dir answers it
// (kafka/logdirs.Move): the log dir itself is where every replica
// already is, NONE and nothing moves; any other dir is
// LOG_DIR_NOT_FOUND; a partition that does not exist is
// UNKNOWN_TOPIC_OR_PARTITION, one this node does not hold (cluster mode,
// led elsewhere) REPLICA_NOT_AVAILABLE. A partition named under several
// dirs is answered once, for the last, as Kafka keys them by partition.
// ALTER on the cluster, else every partition CLUSTER_AUTHORIZATION_FAILED.

import (
	"cmp"
	"slices"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/logdirs"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleAlterReplicaLogDirs(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.AlterReplicaLogDirsRequest)
	resp := r.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	dirs := map[topicPartition]string{}
	for _, d := range r.Dirs {
		for _, t := range d.Topics {
			for _, p := range t.Partitions {
				dirs[topicPartition{t.Topic, p}] = d.Dir
			}
		}
	}
	allowed := rc.allowedCluster(auth.OpAlter)
	tps := make([]topicPartition, 0, len(dirs))
	for tp := range dirs {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b topicPartition) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	for _, tp := range tps {
		code := kerr.ClusterAuthorizationFailed.Code
		if allowed {
			_, err := s.partitionOf(tp.topic, tp.partition, false)
			h := logdirs.Hosting{Exists: err == nil, Local: err == nil && s.leadsHere(tp.topic, tp.partition)}
			code = logdirs.Move(s.cfg.LogDir, dirs[tp], tp.topic, tp.partition, h)
		}
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != tp.topic {
			t := kmsg.NewAlterReplicaLogDirsResponseTopic()
			t.Topic = tp.topic
			resp.Topics = append(resp.Topics, t)
		}
		p := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
		p.Partition, p.ErrorCode = tp.partition, code
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, p)
	}
	return resp, nil
}
