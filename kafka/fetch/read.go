package fetch

import (
	"github.com/kgateway/kgateway/kafka/fetchsession"
	"github.com/kgateway/kgateway/kafka/fetchwire"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// read is one read of a fetch's items: an answer per item (record
// batches as markers into wire, kafka/fetchwire), what else each item's
// read left, the record bytes' total, and whether a partition failed.
type read struct {
	parts  []kmsg.FetchResponseTopicPartition
	items  []itemRead
	wire   *fetchwire.Batches
	total  int
	failed bool
}

// itemRead is what one item's read left besides its answer.
type itemRead struct {
	size int // record bytes
	kind readKind
	// version is the partition's Version loaded before the read
	// (versioned only).
	version resolver.Version
	// quiet is the read, when it found nothing new, for the item's
	// session to keep (fetchsession.Quiet).
	quiet fetchsession.Quiet
}

// readKind says how to tell whether an item's answer may have changed
// since its read.
type readKind uint8

const (
	// fixed: answered without a read, by an error no append changes.
	fixed readKind = iota
	// unversioned: read with no Version to tell a change by.
	unversioned
	// versioned: read under version.
	versioned
)

// readOnce reads every item into rd under the request's byte budget (an
// error answers at once, like Kafka's DelayedFetch). With fired (rd
// holding a previous read of the same items) only the partitions in fired
// are read again; the others keep their answer, which no durable append
// has changed since.
func (f *Fetcher) readOnce(r *kmsg.FetchRequest, items []Item, rd *read, fired map[resolver.PartitionKey]bool) {
	budget, _ := f.limits(r)
	iso := resolver.ReadUncommitted
	if r.IsolationLevel == int8(resolver.ReadCommitted) {
		iso = resolver.ReadCommitted
	}
	rd.total, rd.failed = 0, false
	follower := ReplicaID(r) >= 0
	for i := range items {
		it, out, ir := &items[i], &rd.parts[i], &rd.items[i]
		if fired == nil || fired[it.firedKey()] {
			*ir = itemRead{}
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
				*ir = f.readPartition(it, maxBytes, minOne, iso, r.Version, rd.wire, out)
			}
		}
		rd.total += ir.size
		rd.failed = rd.failed || out.ErrorCode != 0
	}
}

// readPartition reads one partition through its resolved binding into
// out: one read, or with the budget spent one snapshot, and the bounds of
// either are set on every answer. A partition of a session whose last
// read found nothing new, unchanged since, is answered as then without a
// read (a session's unchanged partitions).
func (f *Fetcher) readPartition(it *Item, maxBytes int, minOne bool, iso resolver.Isolation, version int16, wire *fetchwire.Batches, out *kmsg.FetchResponseTopicPartition) itemRead {
	if ir, ok := f.answerQuiet(it, iso, out); ok {
		return ir
	}
	topic, rp := it.Name, it.rp
	h, err := it.resolve(f.Host)
	if err != nil {
		*out = f.errorPart(rp.Partition, err)
		return itemRead{kind: unversioned}
	}
	if err := f.Host.RouteError(topic, rp.Partition, currentEpoch(version, rp)); err != nil { // NOT_LEADER_OR_FOLLOWER routing, the leader epoch check
		*out = f.moved(topic, rp.Partition, err)
		return itemRead{kind: unversioned}
	}
	internal := resolver.IsInternalTopic(topic)
	ir := itemRead{kind: unversioned}
	if v, ok := f.version(h, it, internal); ok {
		ir.kind, ir.version = versioned, v
	}
	if maxBytes <= 0 && !minOne {
		// Budget spent: report the bounds only.
		*out = f.boundsOnly(h, internal, rp.Partition)
		if out.ErrorCode == 0 {
			out.AbortedTransactions = abortedOf(iso, nil)
		}
		ir.quiet = quietOf(h, ir, rp.FetchOffset, out)
		return ir
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
		*out = f.errorPart(rp.Partition, err)
		return ir
	}
	*out = kmsg.NewFetchResponseTopicPartition()
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
	ir.size = res.Bytes
	ir.quiet = quietOf(h, ir, rp.FetchOffset, out)
	return ir
}

// version is h's Version for a session's item, ok false when the
// partition is not to be answered from its last read: without a session,
// in a cluster (leadership moves the bounds: the cluster's reads), an
// internal topic, or a view no Version covers.
func (f *Fetcher) version(h resolver.Partition, it *Item, internal bool) (resolver.Version, bool) {
	if it.sp == nil || f.Cluster || internal {
		return resolver.Version{}, false
	}
	return h.Version()
}

// quietOf is the Quiet of an answer read at offset: set only for a
// versioned read's answer at the end of the log (offset the high
// watermark) without records or error, which no byte budget or isolation
// level would have answered otherwise.
func quietOf(h resolver.Partition, ir itemRead, offset int64, out *kmsg.FetchResponseTopicPartition) fetchsession.Quiet {
	if ir.kind != versioned || out.ErrorCode != 0 || len(out.RecordBatches) > 0 || out.HighWatermark != offset {
		return fetchsession.Quiet{}
	}
	return fetchsession.Quiet{Set: true, Offset: offset, Version: ir.version, LSO: out.LastStableOffset, LogStart: out.LogStartOffset, Binding: h}
}

// answerQuiet answers a session's partition whose last read found
// nothing new (it.quiet), fetched at the same offset, as that read did,
// without a read or a lookup, while the binding that read went through
// still has the Version loaded before it (a session's unchanged
// partitions). A topic deleted (and re-created) or a partition bound
// again moves that Version (it holds the partition's identity and change
// count), so an unchanged one means a lookup now would give the same
// binding, and a read the same answer. Only on one node (a cluster's
// reads have no Version; its route check is the only one); authorization
// is the request's, checked before (Item.Refused).
func (f *Fetcher) answerQuiet(it *Item, iso resolver.Isolation, out *kmsg.FetchResponseTopicPartition) (itemRead, bool) {
	q := it.quiet
	if f.Cluster || it.sp == nil || !q.Set || q.Offset != it.rp.FetchOffset {
		return itemRead{}, false
	}
	h, ok := q.Binding.(resolver.Partition)
	if !ok {
		return itemRead{}, false
	}
	if v, ok := h.Version(); !ok || v != q.Version {
		return itemRead{}, false
	}
	it.h, it.herr, it.resolved = h, nil, true
	quietAnswer(out, it.rp.Partition, q, iso)
	return itemRead{kind: versioned, version: q.Version, quiet: q}, true
}

// quietAnswer answers a partition in out as its last read q did: its
// bounds, no records.
func quietAnswer(out *kmsg.FetchResponseTopicPartition, partition int32, q fetchsession.Quiet, iso resolver.Isolation) {
	*out = kmsg.FetchResponseTopicPartition{}
	out.Default()
	out.Partition = partition
	out.HighWatermark, out.LastStableOffset, out.LogStartOffset = q.Offset, q.LSO, q.LogStart
	out.RecordBatches = []byte{}
	out.AbortedTransactions = abortedOf(iso, nil)
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
