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
//       ongoing transaction (AddPartitionsToTxn, durable partition adds), else
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
//       on NOT_LEADER_OR_FOLLOWER (NOT_LEADER_OR_FOLLOWER routing).
//   v11 same as v10.
//   v12 transaction version 2: a transactional batch adds its partition
//       to its producer's transaction through the coordinator, durably,
//       before it is appended (KIP-890 implicit adds); no AddPartitionsToTxn.
//       In a cluster the leader asks the coordinator through etcd
//       (implicit adds across nodes, cluster transactions).
//   v13 topics by id instead of by name (KIP-516): an unknown id is
//       UNKNOWN_TOPIC_ID for each of its partitions, and never creates a
//       topic (kafka/topicid).
//
// acks=0 gets no response at all (no response for acks=0); acks=1 and acks=all are answered
// after the batch is durable (D1). A connection's requests take effect in
// request order (requests in effect one at a time), and a request's batches are all written before any
// is waited for: the connection's next request is let go as soon as this
// one's batches are written, so pipelined produce requests share group
// commits instead of paying one fsync each. The resolver
// validates each batch (magic, lengths, CRC32C, codec, size, sequence) and
// its records, decompressed if need be (record validation).
// In cluster mode a partition this node does not lead is
// NOT_LEADER_OR_FOLLOWER (NOT_LEADER_OR_FOLLOWER routing), and auto-creation goes through the shared
// catalog (topic changes through the catalog).
// Left out: per-record errors, timeouts
// (appends are synchronous).

import (
	"context"
	"fmt"

	"github.com/kgateway/kgateway/kafka/produce"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// handleProduce writes a produce through kafka/produce: the refusals,
// each partition's checks, the writes and the waits are there; the
// request's catalog, the moved leaders' endpoints (v10+) and acks=0's
// silence are here.
func handleProduce(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ProduceRequest)
	h := produceHost{s: s}
	resp, durable := produce.Write(h, produce.Call{Ctx: rc.ctx, Version: rc.version, FrameSize: rc.stats.size, Frame: rc.req.Frame(), Appended: rc.appended}, r)
	rc.stats.durable = durable
	s.produceMoved(rc.version, resp)
	if rc.version >= 11 {
		produce.TxnAbortable(resp)
	}
	if r.Acks == 0 {
		// No response for acks=0: no response. Like Kafka, a failure closes the connection so
		// that the producer notices at all.
		if produce.Failed(resp) {
			return nil, fmt.Errorf("kafka: acks=0 produce failed")
		}
		return nil, nil
	}
	return resp, nil
}

// produceHost is the Server as kafka/produce sees it for one request
// (produce.Host): cat auto-creates as the request's principal.
type produceHost struct {
	s *Server
}

func (h produceHost) Resolve(topic string, partition int32) (resolver.Partition, error) {
	return h.s.resolvePartition(topic, partition, true)
}

func (h produceHost) RouteError(topic string, partition int32) error {
	return h.s.routeError(topic, partition, noLeaderEpoch)
}

func (h produceHost) Txns() (produce.Txns, error) {
	c, err := h.s.txnCoordinator()
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (h produceHost) VerifyTxn(ctx context.Context, topic string, partition int32, pid int64, epoch int16) (bool, error) {
	registered, err := h.s.cfg.Cluster.VerifyTxn(ctx, topic, partition, pid, epoch)
	if err != nil {
		h.s.log.Debug("txn-verify-failed", zap.String("topic", topic), zap.Int32("partition", partition), zap.Error(err))
	}
	return registered, err
}

func (h produceHost) AddTxnPartition(ctx context.Context, id, topic string, partition int32, pid int64, epoch int16) (int16, error) {
	return h.s.cfg.Cluster.AddTxnPartition(ctx, id, topic, partition, pid, epoch)
}

func (h produceHost) Cluster() bool { return h.s.cfg.Cluster != nil }

func (h produceHost) Code(err error) int16 { return errCode(err) }

// anyTransactional reports whether any partition's records are a
// transactional batch (before the request is parsed: topic ids are
// checked first, authz.go).
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

// produceMoved names the moved leaders and their endpoints
// (produce.Moved, KIP-951); only in cluster mode is a partition ever led
// elsewhere.
func (s *Server) produceMoved(version int16, resp *kmsg.ProduceResponse) {
	if version < 10 || s.cfg.Cluster == nil {
		return
	}
	produce.Moved(resp, s.leader, s.endpoints())
}
