package produce

import (
	"errors"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produced waits until pp is durable (D1) and answers it. A duplicate
// (an idempotent retry, D4) is answered as Kafka answers it from the
// producer state's batch metadata: the original batch's offset, and its
// max timestamp as LogAppendTime, whatever the topic's timestamp type.
func produced(h Host, t *target, pp *resolver.PendingProduce) kmsg.ProduceResponseTopicPartition {
	res, err := pp.Wait()
	if err != nil {
		return answerError(h, t.partition, err)
	}
	p := kmsg.NewProduceResponseTopicPartition()
	p.Partition = t.partition
	p.BaseOffset = int64(res.BaseOffset)
	p.LogAppendTime = res.LogAppendTime
	p.LogStartOffset = int64(res.LogStart)
	if res.Duplicate {
		p.LogAppendTime = storedMaxTimestamp(h, t, res.BaseOffset)
	}
	return p
}

// storedMaxTimestamp is the max timestamp of the batch stored at offset
// (a LogAppendTime topic's is its append time), -1 when it cannot be
// read.
func storedMaxTimestamp(h Host, t *target, offset resolver.Offset) int64 {
	ph, err := t.resolve(h)
	if err != nil {
		return -1
	}
	res, err := ph.Fetch(offset, 1, true, resolver.ReadUncommitted, nil)
	if err != nil || len(res.Batches) == 0 {
		return -1
	}
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(res.Batches[0]); err != nil || rb.FirstOffset != int64(offset) {
		return -1
	}
	return rb.MaxTimestamp
}

// refused answers a partition whose batch the resolver refused. A batch
// refused for some of its records (KIP-467) is answered as Kafka's
// ReplicaManager answers a RecordValidationException: INVALID_RECORD,
// every refused record listed by its index in the batch with its message
// (v8+), the batch's message, and the log start. Sequence and epoch
// errors of the append carry the log start too (Kafka's
// processFailedRecord); a transactional batch's epoch is refused by
// Kafka's verification before any append, without it.
//
// A compressed record above max.decompressed.message.bytes fails the batch
// as a whole (Kafka's InvalidRecordException from the decompressing
// iterator): INVALID_RECORD, no list, and the log start too.
func refused(h Host, t *target, transactional bool, err error) kmsg.ProduceResponseTopicPartition {
	out := answerError(h, t.partition, err)
	var re *resolver.RecordErrors
	isRecords := errors.As(err, &re) || errors.Is(err, resolver.ErrRecordBody)
	if re != nil {
		out.ErrorMessage = kmsg.StringPtr(re.Error())
		for _, r := range re.Records {
			e := kmsg.NewProduceResponseTopicPartitionErrorRecord()
			e.RelativeOffset, e.ErrorMessage = r.BatchIndex, kmsg.StringPtr(r.Message)
			out.ErrorRecords = append(out.ErrorRecords, e)
		}
	}
	appendErr := errors.Is(err, resolver.ErrOutOfOrderSequence) || !transactional && errors.Is(err, resolver.ErrInvalidProducerEpoch)
	if !isRecords && !appendErr {
		return out
	}
	if p, rerr := t.resolve(h); rerr == nil {
		if start, _, _, berr := p.Bounds(); berr == nil {
			out.LogStartOffset = int64(start)
		}
	}
	return out
}

// answerError answers a partition with err's code and message, no
// offsets (-1).
func answerError(h Host, partition int32, err error) kmsg.ProduceResponseTopicPartition {
	p := kmsg.NewProduceResponseTopicPartition()
	p.Partition = partition
	p.ErrorCode = h.Code(err)
	if err != nil {
		p.ErrorMessage = kmsg.StringPtr(err.Error())
	}
	p.BaseOffset, p.LogAppendTime, p.LogStartOffset = -1, -1, -1
	return p
}

// Failed reports whether any partition of resp failed (acks=0 closes the
// connection then, no response for acks=0).
func Failed(resp *kmsg.ProduceResponse) bool {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return true
			}
		}
	}
	return false
}

// Endpoint is a node's address as a KIP-951 answer lists it; ok false
// when the node is not live.
type Endpoint func(node int32) (host string, port int32, rack *string, ok bool)

// Moved names, from v10 (KIP-951), the current leader (leader) of every
// partition answered NOT_LEADER_OR_FOLLOWER, here or by storage after
// losing the partition, and lists those leaders' endpoints once each, so
// that the producer moves without asking Metadata first.
func Moved(resp *kmsg.ProduceResponse, leader func(topic string, partition int32) (node, epoch int32, ok bool), endpoint Endpoint) {
	if resp.Version < 10 {
		return
	}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if p.ErrorCode != kerr.NotLeaderForPartition.Code {
				continue
			}
			node, epoch, ok := leader(t.Topic, p.Partition)
			if !ok {
				continue
			}
			p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = node, epoch
			addBroker(resp, endpoint, node)
		}
	}
}

// addBroker lists node's endpoint in resp once.
func addBroker(resp *kmsg.ProduceResponse, endpoint Endpoint, node int32) {
	for _, b := range resp.Brokers {
		if b.NodeID == node {
			return
		}
	}
	host, port, rack, ok := endpoint(node)
	if !ok {
		return
	}
	pb := kmsg.NewProduceResponseBroker()
	pb.NodeID, pb.Host, pb.Port, pb.Rack = node, host, port, rack
	resp.Brokers = append(resp.Brokers, pb)
}
