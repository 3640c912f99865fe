package kafka

// DescribeLogDirs (key 35), versions 1–5 (Kafka 4 removed v0, KIP-896).
//
//   v1  nothing new.   v2  flexible.   v3  top-level error code.
//   v4  the log dir's total and usable bytes.   v5  is_cordoned.
//
// The data directory is the one log dir (Config.LogDir): each partition
// this node holds with the bytes of its segment files on local disk, an
// offloaded (tiered) ledger's bytes left out as Kafka leaves a tiered
// log's remote part out (kafka/logdirs). Null topics ask for every
// partition; named partitions that do not exist are left out, as in
// Kafka. Offset lag is 0 (no future replica: nothing is ever moved) and
// the dir is never cordoned. Internal topics are not listed: their state
// lives in the offsets store, not in partition logs. In cluster mode
// only the partitions this node leads are listed (leaders at their epochs).
// DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED and no dirs
// (before v3, which has no place for the error, no dirs alone).

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/logdirs"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDescribeLogDirs(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DescribeLogDirsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	if !rc.allowedCluster(auth.OpDescribe) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	if s.cfg.LogDir == "" {
		return resp, nil
	}
	resp.Dirs = append(resp.Dirs, logdirs.Describe(s.cfg.LogDir, r.Version, r.Topics, s.res.PartitionInfos(), s.leadsHere))
	return resp, nil
}

// leadsHere reports whether this node leads the partition: always
// without Cluster (leaders at their epochs).
func (s *Server) leadsHere(topic string, partition int32) bool {
	node, _, ok := s.leader(topic, partition)
	return ok && node == s.cfg.NodeID
}
