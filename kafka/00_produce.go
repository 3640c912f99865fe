package kafka

// Produce (key 0), versions 3–13; 0–13 advertised.
//
//   v0–v2 are advertised but every partition is answered
//       UNSUPPORTED_VERSION, as Kafka 4 does (KAFKA-18659): librdkafka
//       sends no compressed batch to a broker whose minimum Produce
//       version is above 0, and negotiates the highest common version,
//       so it never sends these. (Kafka 4 closes the connection instead;
//       an answer says why.)
//   v3  record batches (magic 2) only, exactly one per partition
//       (INVALID_RECORD otherwise); transactional id: a transactional
//       batch is accepted on a partition its producer added to its
//       ongoing transaction (AddPartitionsToTxn, X13), else
//       INVALID_TXN_STATE (KIP-890 part 1, resolver), from v11
//       TRANSACTION_ABORTABLE. A transactional
//       batch in a request without a transactional id fails the whole
//       request with TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as in Kafka.
//   v4  KAFKA_STORAGE_ERROR may be returned.
//   v5  log start offset per partition.
//   v6  nothing new on the wire.
//   v7  zstd allowed (UNSUPPORTED_COMPRESSION_TYPE below v7).
//   v8  per-record errors and an error message per partition.
//   v9  flexible.
//   v10 KIP-951 leader-discovery tagged fields: set only in cluster mode,
//       on NOT_LEADER_OR_FOLLOWER (Y2).
//   v11 same as v10.
//   v12 transaction version 2: a transactional batch adds its partition
//       to its producer's transaction through the coordinator, durably,
//       before it is appended (kafka/txn X18); no AddPartitionsToTxn.
//   v13 topics by id instead of by name (KIP-516): an unknown id is
//       UNKNOWN_TOPIC_ID for each of its partitions, and never creates a
//       topic (kafka/topicid). Like v12 it is not served in cluster
//       mode (Y19).
//
// acks=0 gets no response at all (K5); acks=1 and acks=all are answered
// after the batch is durable (D1). A connection's requests take effect in
// request order (K4), and a request's batches are all written before any
// is waited for: the connection's next request is let go as soon as this
// one's batches are written, so pipelined produce requests share group
// commits instead of paying one fsync each. The resolver
// validates each batch (magic, lengths, CRC32C, codec, size, sequence) and
// its records, decompressed if need be (resolver Z1–Z4).
// In cluster mode a partition this node does not lead is
// NOT_LEADER_OR_FOLLOWER (Y2), and auto-creation goes through the shared
// catalog (Y6).
// Left out: per-record errors, timeouts
// (appends are synchronous).

import (
	"context"
	"errors"
	"fmt"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

func handleProduce(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ProduceRequest)
	resp := r.ResponseKind().(*kmsg.ProduceResponse)
	var fixed error
	switch {
	case rc.version < minProduceVersion:
		fixed = fmt.Errorf("%w: Produce v%d; v%d and later are supported", kerr.UnsupportedVersion, rc.version, minProduceVersion)
	case r.TransactionID == nil && anyTransactional(r):
		// Kafka's KafkaApis.handleProduceRequest: the whole request fails.
		fixed = fmt.Errorf("%w: a transactional batch in a produce request without a transactional id", kerr.TransactionalIDAuthorizationFailed)
	case r.Acks != 0 && r.Acks != 1 && r.Acks != -1:
		fixed = fmt.Errorf("%w: acks %d", kerr.InvalidRequiredAcks, r.Acks)
	}
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(r.Topics))
	var waits []pendingPartition
	frame := frameBacking(r, rc.stats.size)
	for i, rt := range r.Topics {
		t := &resp.Topics[i]
		*t = kmsg.NewProduceResponseTopic()
		t.Topic = rt.Topic
		t.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		for j, rp := range rt.Partitions {
			out := &t.Partitions[j]
			if fixed != nil {
				*out = produceError(rp.Partition, fixed)
				continue
			}
			if err := checkProduceCodec(rc.version, rp.Records); err != nil {
				*out = produceError(rp.Partition, err)
				continue
			}
			if err := s.addToTxnImplicitly(rc.version, r.TransactionID, rt.Topic, rp.Partition, rp.Records); err != nil {
				*out = produceError(rp.Partition, err)
				continue
			}
			pp, err := s.writePartition(rc.ctx, rt.Topic, rp.Partition, rp.Records, frame)
			if err != nil {
				*out = s.produceRefused(rt.Topic, rp.Partition, err)
				continue
			}
			waits = append(waits, pendingPartition{out: out, partition: rp.Partition, pp: pp})
		}
	}
	// K4: every batch of this request is written, in request order; the
	// connection's next request may start now, while these are synced, so
	// that one group commit covers both (D1 still holds: nothing below is
	// answered before Wait).
	rc.appended()
	for _, w := range waits {
		*w.out = producedPartition(w.partition, w.pp)
	}
	s.produceMoved(rc.version, resp)
	if rc.version >= 11 {
		txnAbortable(resp)
	}
	if r.Acks == 0 {
		// K5: no response. Like Kafka, a failure closes the connection so
		// that the producer notices at all.
		if anyProduceError(resp) {
			return nil, fmt.Errorf("kafka: acks=0 produce failed")
		}
		return nil, nil
	}
	return resp, nil
}

// txnAbortable answers a transactional batch refused for a partition not
// in its producer's transaction TRANSACTION_ABORTABLE instead of
// INVALID_TXN_STATE from Produce v11 on (KIP-890): the producer can abort
// and go on instead of failing for good, as Apache Kafka 4.4 answers
// (test/kafkadiff); v10 and older clients keep INVALID_TXN_STATE.
func txnAbortable(resp *kmsg.ProduceResponse) {
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			if p := &resp.Topics[i].Partitions[j]; p.ErrorCode == kerr.InvalidTxnState.Code {
				p.ErrorCode = kerr.TransactionAbortable.Code
			}
		}
	}
}

// anyTransactional reports whether any partition's records are a
// transactional batch.
func anyTransactional(r *kmsg.ProduceRequest) bool {
	for _, rt := range r.Topics {
		for _, rp := range rt.Partitions {
			if resolver.BatchTransactional(rp.Records) {
				return true
			}
		}
	}
	return false
}

// minProduceVersion is the oldest Produce version served; older ones are
// advertised (apis.go) and answered UNSUPPORTED_VERSION.
const minProduceVersion = 3

// checkProduceCodec refuses zstd below Produce v7 (KIP-110), as Kafka's
// ProduceRequest.validateRecords does.
func checkProduceCodec(version int16, records []byte) error {
	if c, ok := resolver.BatchCodec(records); ok && c == resolver.CodecZstd && version < 7 {
		return fmt.Errorf("%w: zstd needs Produce v7, got v%d", kerr.UnsupportedCompressionType, version)
	}
	return nil
}

// pendingPartition is one partition's written, not yet durable, append.
type pendingPartition struct {
	out       *kmsg.ProduceResponseTopicPartition
	partition int32
	pp        *resolver.PendingProduce
}

// frameBacking describes the request's frame buffer to the store when
// more than one partition's records are slices of it. Each records slice
// is handed over without a copy (kmsg does not copy, and nothing reads or
// reuses the frame after the handler), but a cached slice keeps the whole
// frame alive: the store's tail cache must charge the frame, once, not
// the slices (storage C5). A single-partition request's records are most
// of its frame and are charged as they are.
func frameBacking(r *kmsg.ProduceRequest, frameSize int) *resolver.Backing {
	n := 0
	for _, rt := range r.Topics {
		n += len(rt.Partitions)
	}
	if n <= 1 {
		return nil
	}
	return resolver.NewBacking(frameSize)
}

// writePartition writes one partition's batches without waiting for
// durability. A missing topic is UNKNOWN_TOPIC_OR_PARTITION: as in Kafka
// 4, only Metadata auto-creates.
func (s *Server) writePartition(ctx context.Context, topic string, partition int32, records []byte, frame *resolver.Backing) (*resolver.PendingProduce, error) {
	if _, err := s.partitionOf(topic, partition, true); err != nil {
		return nil, err
	}
	if err := s.routeError(topic, partition, noLeaderEpoch); err != nil { // Y2
		return nil, err
	}
	pp, err := s.res.ProduceAsyncOwned(topic, partition, records, frame)
	if err == nil || s.cfg.Cluster == nil || !errors.Is(err, resolver.ErrInvalidTxnState) {
		return pp, err
	}
	if err := s.verifyTxn(ctx, topic, partition, records, err); err != nil {
		return nil, err
	}
	// Registered since: the refusal wrote nothing and left records as
	// they were but for a LogAppendTime stamp, which the retry sets again.
	return s.res.ProduceAsyncOwned(topic, partition, records, frame)
}

// verifyTxn checks, in a cluster, a transactional batch the resolver
// refused as not registered against the coordinator's registration
// (X24): nil when it is registered (and now applied here), refused (the
// resolver's error) when it is not, and NOT_ENOUGH_REPLICAS, retriable,
// when etcd cannot tell now — as Kafka answers a verification its
// coordinator could not complete, so the client retries the batch
// instead of failing it.
func (s *Server) verifyTxn(ctx context.Context, topic string, partition int32, records []byte, refused error) error {
	pid, epoch, ok := resolver.TxnBatchProducer(records)
	if !ok {
		return refused
	}
	registered, err := s.cfg.Cluster.VerifyTxn(ctx, topic, partition, pid, epoch)
	switch {
	case err != nil:
		s.log.Debug("txn-verify-failed", zap.String("topic", topic), zap.Int32("partition", partition), zap.Error(err))
		return fmt.Errorf("%w: verifying the transaction of producer %d: %v", kerr.NotEnoughReplicas, pid, err)
	case !registered:
		return refused
	}
	return nil
}

// producedPartition waits until pp is durable (D1) and answers it.
func producedPartition(partition int32, pp *resolver.PendingProduce) kmsg.ProduceResponseTopicPartition {
	res, err := pp.Wait()
	if err != nil {
		return produceError(partition, err)
	}
	p := kmsg.NewProduceResponseTopicPartition()
	p.Partition = partition
	p.BaseOffset = int64(res.BaseOffset)
	p.LogAppendTime = res.LogAppendTime
	p.LogStartOffset = int64(res.LogStart)
	return p
}

// produceMoved names the current leader of every partition answered
// NOT_LEADER_OR_FOLLOWER (Y2), here or by storage after losing the
// partition, from v10 (KIP-951), and lists those leaders' endpoints, so
// that the producer moves without asking Metadata first.
func (s *Server) produceMoved(version int16, resp *kmsg.ProduceResponse) {
	if version < 10 || s.cfg.Cluster == nil {
		return
	}
	var brokers []Broker
	for i := range resp.Topics {
		t := &resp.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if p.ErrorCode != kerr.NotLeaderForPartition.Code {
				continue
			}
			node, epoch, ok := s.leader(t.Topic, p.Partition)
			if !ok {
				continue
			}
			p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = node, epoch
			if brokers == nil {
				brokers = s.cfg.Cluster.Brokers()
			}
			addProduceBroker(resp, brokers, node)
		}
	}
}

// addProduceBroker lists node's endpoint in resp once.
func addProduceBroker(resp *kmsg.ProduceResponse, brokers []Broker, node int32) {
	for _, b := range resp.Brokers {
		if b.NodeID == node {
			return
		}
	}
	b, ok := brokerByID(brokers, node)
	if !ok {
		return
	}
	pb := kmsg.NewProduceResponseBroker()
	pb.NodeID, pb.Host, pb.Port, pb.Rack = b.NodeID, b.Host, b.Port, b.Rack
	resp.Brokers = append(resp.Brokers, pb)
}

// produceRefused answers a partition whose batch the resolver refused.
// A batch refused for some of its records (KIP-467) is answered as
// Kafka's ReplicaManager answers a RecordValidationException:
// INVALID_RECORD, every refused record listed by its index in the batch
// with its message (v8+), the batch's message, and the log start.
func (s *Server) produceRefused(topic string, partition int32, err error) kmsg.ProduceResponseTopicPartition {
	out := produceError(partition, err)
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
	if start, _, _, berr := s.bounds(topic, partition); berr == nil {
		out.LogStartOffset = int64(start)
	}
	return out
}

func produceError(partition int32, err error) kmsg.ProduceResponseTopicPartition {
	p := kmsg.NewProduceResponseTopicPartition()
	p.Partition = partition
	p.ErrorCode = errCode(err)
	p.ErrorMessage = errMessage(err)
	p.BaseOffset, p.LogAppendTime, p.LogStartOffset = -1, -1, -1
	return p
}

func anyProduceError(resp *kmsg.ProduceResponse) bool {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return true
			}
		}
	}
	return false
}
