package logdirs

import (
	"cmp"
	"slices"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Describe is the log dir dir as DescribeLogDirs (of version) answers
// it: its usage (v4+), and the local size of every partition of infos
// this node leads (leads) that the request asked for (asked nil: all);
// KAFKA_STORAGE_ERROR when dir's file system cannot be read.
func Describe(dir string, version int16, asked []kmsg.DescribeLogDirsRequestTopic, infos []resolver.PartitionInfo,
	leads func(topic string, partition int32) bool) kmsg.DescribeLogDirsResponseDir {
	d := kmsg.NewDescribeLogDirsResponseDir()
	d.Dir = dir
	usage, err := Stat(dir)
	if err != nil {
		d.ErrorCode = kerr.KafkaStorageError.Code
		return d
	}
	if version >= 4 {
		d.TotalBytes, d.UsableBytes = usage.Total, usage.Usable
	}
	var want map[topicPartition]bool
	if asked != nil {
		want = map[topicPartition]bool{}
		for _, t := range asked {
			for _, p := range t.Partitions {
				want[topicPartition{t.Topic, p}] = true
			}
		}
	}
	var parts []Partition
	for _, p := range infos {
		if (want != nil && !want[topicPartition{p.Topic, p.Partition}]) || !leads(p.Topic, p.Partition) {
			continue
		}
		parts = append(parts, Partition{Topic: p.Topic, Partition: p.Partition, Size: LocalBytes(p)})
	}
	for _, t := range ByTopic(parts) {
		dt := kmsg.NewDescribeLogDirsResponseDirTopic()
		dt.Topic = t.Name
		for _, p := range t.Partitions {
			dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			dp.Partition, dp.Size = p.Partition, p.Size
			dt.Partitions = append(dt.Partitions, dp)
		}
		d.Topics = append(d.Topics, dt)
	}
	return d
}

// topicPartition is a partition a request names.
type topicPartition struct {
	topic     string
	partition int32
}

// MoveAll answers AlterReplicaLogDirs: every partition the request names
// (the last dir naming it wins), in topic and partition order, moved by
// Move, or CLUSTER_AUTHORIZATION_FAILED when the caller may not
// (allowed false); hosting says where each partition is.
func MoveAll(logDir string, asked []kmsg.AlterReplicaLogDirsRequestDir, allowed bool,
	hosting func(topic string, partition int32) Hosting) []kmsg.AlterReplicaLogDirsResponseTopic {
	dirs := map[topicPartition]string{}
	for _, d := range asked {
		for _, t := range d.Topics {
			for _, p := range t.Partitions {
				dirs[topicPartition{t.Topic, p}] = d.Dir
			}
		}
	}
	tps := make([]topicPartition, 0, len(dirs))
	for tp := range dirs {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b topicPartition) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	var out []kmsg.AlterReplicaLogDirsResponseTopic
	for _, tp := range tps {
		code := kerr.ClusterAuthorizationFailed.Code
		if allowed {
			code = Move(logDir, dirs[tp], tp.topic, tp.partition, hosting(tp.topic, tp.partition))
		}
		if n := len(out); n == 0 || out[n-1].Topic != tp.topic {
			t := kmsg.NewAlterReplicaLogDirsResponseTopic()
			t.Topic = tp.topic
			out = append(out, t)
		}
		p := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
		p.Partition, p.ErrorCode = tp.partition, code
		t := &out[len(out)-1]
		t.Partitions = append(t.Partitions, p)
	}
	return out
}
