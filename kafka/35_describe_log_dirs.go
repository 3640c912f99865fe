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

type topicPartition struct {
	topic     string
	partition int32
}

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
	d := kmsg.NewDescribeLogDirsResponseDir()
	d.Dir = s.cfg.LogDir
	usage, err := logdirs.Stat(s.cfg.LogDir)
	if err != nil {
		d.ErrorCode = kerr.KafkaStorageError.Code
		resp.Dirs = append(resp.Dirs, d)
		return resp, nil
	}
	if r.Version >= 4 {
		d.TotalBytes, d.UsableBytes = usage.Total, usage.Usable
	}
	var want map[topicPartition]bool
	if r.Topics != nil {
		want = map[topicPartition]bool{}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				want[topicPartition{t.Topic, p}] = true
			}
		}
	}
	var parts []logdirs.Partition
	for _, p := range s.res.PartitionInfos() {
		if (want != nil && !want[topicPartition{p.Topic, p.Partition}]) || !s.leadsHere(p.Topic, p.Partition) {
			continue
		}
		parts = append(parts, logdirs.Partition{Topic: p.Topic, Partition: p.Partition, Size: logdirs.LocalBytes(p)})
	}
	for _, t := range logdirs.ByTopic(parts) {
		dt := kmsg.NewDescribeLogDirsResponseDirTopic()
		dt.Topic = t.Name
		for _, p := range t.Partitions {
			dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			dp.Partition, dp.Size = p.Partition, p.Size
			dt.Partitions = append(dt.Partitions, dp)
		}
		d.Topics = append(d.Topics, dt)
	}
	resp.Dirs = append(resp.Dirs, d)
	return resp, nil
}

// leadsHere reports whether this node leads the partition: always
// without Cluster (leaders at their epochs).
func (s *Server) leadsHere(topic string, partition int32) bool {
	node, _, ok := s.leader(topic, partition)
	return ok && node == s.cfg.NodeID
}
