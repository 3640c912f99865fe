// Package logdirs describes a node's data directory as Kafka's one log
// dir (log.dirs with a single entry): DescribeLogDirs and
// AlterReplicaLogDirs (KIP-113).
//
// A partition's size is the bytes of its ledgers' segment files still on
// local disk, as Kafka's partition size is its local log's segment bytes:
// what the data directory holds for it, whatever the log start (soft
// trimmed entries count until their ledger is removed, as Kafka's count
// until their segment is deleted). A ledger offloaded to the object store
// (tier: uploaded, verified, its local file removed) is not
// counted: Kafka reports a tiered partition's local part only, its remote
// bytes appearing in its RemoteLogManager metrics, never in
// DescribeLogDirs. A ledger uploaded but still local counts, as it is
// still on disk.
//
// The log dir's total and usable bytes are its file system's (statfs:
// blocks and blocks available to an unprivileged user, times the block
// size), as Kafka's FileStore total and usable space; -1 where the
// platform has no statfs.
package logdirs

import (
	"cmp"
	"slices"

	"github.com/kgateway/kgateway/resolver"
)

// Partition is one partition's local size.
type Partition struct {
	Topic     string
	Partition int32
	Size      int64
}

// LocalBytes is the bytes of a partition's ledgers still on local disk.
func LocalBytes(p resolver.PartitionInfo) int64 {
	var n int64
	for _, l := range p.Info.Ledgers {
		if !l.Offloaded {
			n += l.Bytes
		}
	}
	return n
}

// Topic is one topic's described partitions.
type Topic struct {
	Name       string
	Partitions []Partition
}

// ByTopic groups partitions by topic, topics by name and partitions by
// index, leaving out topics with none (as Kafka leaves out a topic none
// of whose partitions was asked for).
func ByTopic(parts []Partition) []Topic {
	slices.SortFunc(parts, func(a, b Partition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	var out []Topic
	for _, p := range parts {
		if len(out) == 0 || out[len(out)-1].Name != p.Topic {
			out = append(out, Topic{Name: p.Topic})
		}
		t := &out[len(out)-1]
		t.Partitions = append(t.Partitions, p)
	}
	return out
}

// Usage is a file system's size and the bytes an unprivileged writer may
// still use; -1 each when unknown.
type Usage struct {
	Total, Usable int64
}
