package produce

import (
	"errors"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produced waits until pp is durable (D1) and answers it.
func produced(h Host, partition int32, pp *resolver.PendingProduce) kmsg.ProduceResponseTopicPartition {
	res, err := pp.Wait()
	if err != nil {
		return answerError(h, partition, err)
	}
	p := kmsg.NewProduceResponseTopicPartition()
	p.Partition = partition
	p.BaseOffset = int64(res.BaseOffset)
	p.LogAppendTime = res.LogAppendTime
	p.LogStartOffset = int64(res.LogStart)
	return p
}

// refused answers a partition whose batch the resolver refused. A batch
// refused for some of its records (KIP-467) is answered as Kafka's
// ReplicaManager answers a RecordValidationException: INVALID_RECORD,
// every refused record listed by its index in the batch with its message
// (v8+), the batch's message, and the log start.
func refused(h Host, t *target, err error) kmsg.ProduceResponseTopicPartition {
	out := answerError(h, t.partition, err)
	var re *resolver.RecordErrors
	if !errors.As(err, &re) {
		return out
	}
	out.ErrorMessage = kmsg.StringPtr(re.Error())
	for _, r := range re.Records {
		e := kmsg.NewProduceResponseTopicPartitionErrorRecord()
		e.RelativeOffset, e.ErrorMessage = r.BatchIndex, kmsg.StringPtr(r.Message)
		out.ErrorRecords = append(out.ErrorRecords, e)
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
