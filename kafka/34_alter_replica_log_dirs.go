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
	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/logdirs"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleAlterReplicaLogDirs(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.AlterReplicaLogDirsRequest)
	resp := r.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	allowed := rc.allowedCluster(auth.OpAlter)
	resp.Topics = logdirs.MoveAll(s.cfg.LogDir, r.Dirs, allowed, func(topic string, partition int32) logdirs.Hosting {
		_, err := s.partitionOf(topic, partition, false)
		return logdirs.Hosting{Exists: err == nil, Local: err == nil && s.leadsHere(topic, partition)}
	})
	return resp, nil
}
