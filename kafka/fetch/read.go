package fetch

import (
	"github.com/kgateway/kgateway/kafka/fetchwire"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// read is one read of a fetch's items: an answer per item (record
// batches as markers into wire, kafka/fetchwire), the record bytes of
// each, their total, and whether a partition failed.
type read struct {
	parts  []kmsg.FetchResponseTopicPartition
	sizes  []int
	wire   *fetchwire.Batches
	total  int
	failed bool
}

// readOnce reads every item under the request's byte budget (an error
// answers at once, like Kafka's DelayedFetch). With prev (the previous
// read of the same items) only the partitions in fired are read again; the
// others keep their answer, which no durable append has changed since.
func (f *Fetcher) readOnce(r *kmsg.FetchRequest, items []Item, prev *read, fired map[resolver.PartitionKey]bool, wire *fetchwire.Batches) *read {
	budget, _ := f.limits(r)
	iso := resolver.ReadUncommitted
	if r.IsolationLevel == int8(resolver.ReadCommitted) {
		iso = resolver.ReadCommitted
	}
	rd := prev
	if rd == nil {
		rd = &read{parts: make([]kmsg.FetchResponseTopicPartition, len(items)), sizes: make([]int, len(items)), wire: wire}
	}
	rd.total, rd.failed = 0, false
	follower := ReplicaID(r) >= 0
	for i := range items {
		it, out := &items[i], &rd.parts[i]
		if prev == nil || fired[resolver.PartitionKey{Topic: it.Name, Partition: it.rp.Partition}] {
			rd.sizes[i] = 0
			switch {
			case it.ErrID:
				*out = f.errorPart(it.rp.Partition, kerr.UnknownTopicID)
			case it.Refused:
				*out = f.errorPart(it.rp.Partition, kerr.TopicAuthorizationFailed)
			case follower:
				// No node replicates from this one: Kafka answers a
				// fetch from a replica that is not one of the
				// partition's followers NOT_LEADER_OR_FOLLOWER.
				*out = f.errorPart(it.rp.Partition, kerr.NotLeaderForPartition)
			case !f.Cluster && r.Version >= 9 && it.rp.CurrentLeaderEpoch >= 0 && f.Host.EpochError(it.rp.CurrentLeaderEpoch) != nil:
				// Kafka checks only an epoch the client knows (>= 0). In
				// cluster mode readPartition checks it (the leader epoch check).
				*out = f.errorPart(it.rp.Partition, f.Host.EpochError(it.rp.CurrentLeaderEpoch))
			default:
				maxBytes := min(int(it.rp.PartitionMaxBytes), budget-rd.total)
				minOne := rd.total == 0 // KIP-74: only until some partition has data
				*out, rd.sizes[i] = f.readPartition(it, maxBytes, minOne, iso, r.Version, rd.wire)
			}
		}
		rd.total += rd.sizes[i]
		rd.failed = rd.failed || out.ErrorCode != 0
	}
	return rd
}

// readPartition reads one partition through its resolved binding: one
// read, or with the budget spent one snapshot, and the bounds of either
// are set on every answer.
func (f *Fetcher) readPartition(it *Item, maxBytes int, minOne bool, iso resolver.Isolation, version int16, wire *fetchwire.Batches) (kmsg.FetchResponseTopicPartition, int) {
	topic, rp := it.Name, it.rp
	h, err := it.resolve(f.Host)
	if err != nil {
		return f.errorPart(rp.Partition, err), 0
	}
	if err := f.Host.RouteError(topic, rp.Partition, currentEpoch(version, rp)); err != nil { // NOT_LEADER_OR_FOLLOWER routing, the leader epoch check
		return f.moved(topic, rp.Partition, err), 0
	}
	internal := resolver.IsInternalTopic(topic)
	if maxBytes <= 0 && !minOne {
		// Budget spent: report the bounds only.
		out := f.boundsOnly(h, internal, rp.Partition)
		if out.ErrorCode == 0 {
			out.AbortedTransactions = abortedOf(iso, nil)
		}
		return out, 0
	}
	offset := resolver.Offset(rp.FetchOffset)
	var res resolver.FetchResult
	if internal {
		res, err = f.Host.ReadInternal(topic, rp.Partition, offset, max(maxBytes, 0), minOne, iso, wire.Lease())
	} else {
		res, err = h.Fetch(offset, max(maxBytes, 0), minOne, iso, wire.Lease())
	}
	if err != nil {
		// Kafka reports no bounds with an error, not even
		// OFFSET_OUT_OF_RANGE's, so none is looked up.
		return f.errorPart(rp.Partition, err), 0
	}
	out := kmsg.NewFetchResponseTopicPartition()
	out.Partition = rp.Partition
	out.HighWatermark = int64(res.HighWatermark)
	out.LastStableOffset = int64(res.LastStable)
	out.LogStartOffset = int64(res.LogStart)
	// Empty, not null: librdkafka refuses a null record set (size -1).
	out.RecordBatches = []byte{}
	if len(res.Batches) > 0 {
		// The stored bytes are the wire bytes: nothing is decoded per
		// record, and nothing is copied (kafka/fetchwire).
		out.RecordBatches = wire.Mark(res.Batches, res.Srcs, res.Bytes)
	}
	out.AbortedTransactions = abortedOf(iso, res.Aborted)
	return out, res.Bytes
}

// abortedOf is a partition's AbortedTransactions (read_committed, resolver
// the read_committed bound). As Kafka sends it: null for read_uncommitted, a list (empty when
// there are none) for read_committed.
func abortedOf(iso resolver.Isolation, aborted []resolver.AbortedTxn) []kmsg.FetchResponseTopicPartitionAbortedTransaction {
	if iso != resolver.ReadCommitted {
		return nil
	}
	out := make([]kmsg.FetchResponseTopicPartitionAbortedTransaction, len(aborted))
	for i, a := range aborted {
		out[i] = kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		out[i].ProducerID, out[i].FirstOffset = a.ProducerID, int64(a.FirstOffset)
	}
	return out
}

// boundsOnly answers a partition without records, with its bounds (an
// internal topic's are all 0: it is empty).
func (f *Fetcher) boundsOnly(h resolver.Partition, internal bool, partition int32) kmsg.FetchResponseTopicPartition {
	var start, hwm, lso resolver.Offset
	var err error
	if !internal {
		start, hwm, lso, err = h.Bounds()
	}
	out := f.errorPart(partition, err)
	if err == nil {
		out.LogStartOffset, out.HighWatermark, out.LastStableOffset = int64(start), int64(hwm), int64(lso)
	}
	return out
}

// currentEpoch is the client's current leader epoch to check: from v9,
// and only one it knows (>= 0), as Kafka reads a negative one as none.
func currentEpoch(version int16, rp kmsg.FetchRequestTopicPartition) int32 {
	if version < 9 || rp.CurrentLeaderEpoch < 0 {
		return NoEpoch
	}
	return rp.CurrentLeaderEpoch
}

// moved answers a partition this node does not serve (NOT_LEADER_OR_FOLLOWER routing) with the
// current leader (KIP-951), so the client moves without asking Metadata
// first. The field is tagged: only v12+ (flexible) carries it; from v16
// the response also lists the endpoints of the leaders it names
// (kafka/'s fetchNodeEndpoints).
func (f *Fetcher) moved(topic string, partition int32, err error) kmsg.FetchResponseTopicPartition {
	out := f.errorPart(partition, err)
	if node, epoch, ok := f.Host.MovedTo(topic, partition, err); ok {
		out.CurrentLeader.LeaderID, out.CurrentLeader.LeaderEpoch = node, epoch
	}
	return out
}

// errorPart answers a partition with err's code as Kafka does
// (FetchResponse.partitionResponse): no bounds (-1) and empty, never null,
// records. librdkafka refuses a whole response holding a null record set
// ("invalid MessageSetSize -1"), so a consumer would never see the error,
// OFFSET_OUT_OF_RANGE above all, and never reset its offset.
func (f *Fetcher) errorPart(partition int32, err error) kmsg.FetchResponseTopicPartition {
	out := kmsg.NewFetchResponseTopicPartition()
	out.Partition = partition
	out.ErrorCode = f.Host.Code(err)
	out.HighWatermark, out.LastStableOffset, out.LogStartOffset = -1, -1, -1
	out.RecordBatches = []byte{}
	return out
}
