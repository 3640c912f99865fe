package produce

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kgateway/kgateway/bufpool"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Host is what a produce needs from kafka/'s Server, for one request
// (its principal's catalog).
type Host interface {
	// Resolve resolves a partition; it never creates a topic (only
	// Metadata auto-creates, as in Kafka 4).
	Resolve(topic string, partition int32) (resolver.Partition, error)
	// RouteError is NOT_LEADER_OR_FOLLOWER for a partition this node
	// does not lead (NOT_LEADER_OR_FOLLOWER routing), nil otherwise.
	RouteError(topic string, partition int32) error
	// Txns is the transaction coordinator, or why there is none now.
	Txns() (Txns, error)
	// VerifyTxn asks a cluster whether the coordinator registered the
	// producer's partition in its transaction (verification across nodes); nil Cluster: never
	// asked.
	VerifyTxn(ctx context.Context, topic string, partition int32, pid int64, epoch int16) (bool, error)
	// AddTxnPartition has a cluster's coordinator add the partition to
	// the transaction of id (implicit adds across nodes): its answer, a
	// Kafka error code, or an error when none came; nil Cluster: never
	// asked.
	AddTxnPartition(ctx context.Context, id, topic string, partition int32, pid int64, epoch int16) (int16, error)
	// Cluster reports cluster mode.
	Cluster() bool
	// Code is the Kafka error code of err (0 for nil).
	Code(err error) int16
}

// Txns is the transaction coordinator's implicit add (KIP-890 part 2).
type Txns interface {
	AddPartitionImplicitly(id string, pid int64, epoch int16, topic string, partition int32) int16
}

// Call is one request: its context, version, frame size, the pooled
// buffer its frame is a slice of (nil: not pooled) and the point at which
// its batches are all written (the connection's next request may start
// then, requests in effect one at a time).
type Call struct {
	Ctx       context.Context
	Version   int16
	FrameSize int
	// Frame is held once for the request. Write lets it go once every
	// batch it wrote is answered (bufpool "The last holder returns it"),
	// and keeps it when a failed write may have left a batch to be
	// written (replicated) after Write returns.
	Frame    *bufpool.Shared
	Appended func()
}

// MinVersion is the oldest Produce version served; older ones are
// advertised and answered UNSUPPORTED_VERSION.
const MinVersion = 3

// Write writes r's batches and answers every partition once its write
// is durable (D1), and reports how long it waited for that. Every batch
// is written before any is waited for (c.Appended in between).
func Write(h Host, c Call, r *kmsg.ProduceRequest) (resp *kmsg.ProduceResponse, durable time.Duration) {
	resp = r.ResponseKind().(*kmsg.ProduceResponse)
	parsed := parse(r)
	var fixed error
	switch {
	case c.Version < MinVersion:
		fixed = fmt.Errorf("%w: Produce v%d; v%d and later are supported", kerr.UnsupportedVersion, c.Version, MinVersion)
	case r.TransactionID == nil && anyTransactional(parsed):
		// Kafka's KafkaApis.handleProduceRequest: the whole request fails.
		fixed = fmt.Errorf("%w: a transactional batch in a produce request without a transactional id", kerr.TransactionalIDAuthorizationFailed)
	case r.Acks != 0 && r.Acks != 1 && r.Acks != -1:
		fixed = fmt.Errorf("%w: acks %d", kerr.InvalidRequiredAcks, r.Acks)
	}
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(r.Topics))
	var waits []pending
	frame, settled, held := frameBacking(r, c.FrameSize, c.Frame), true, false
	for i, rt := range r.Topics {
		t := &resp.Topics[i]
		*t = kmsg.NewProduceResponseTopic()
		t.Topic = rt.Topic
		t.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		for j, rp := range rt.Partitions {
			out := &t.Partitions[j]
			if fixed != nil {
				*out = answerError(h, rp.Partition, fixed)
				continue
			}
			b := &parsed[i][j]
			if err := checkCodec(c.Version, b); err != nil {
				*out = answerError(h, rp.Partition, err)
				continue
			}
			pt := &target{topic: rt.Topic, partition: rp.Partition}
			if err := addToTxnImplicitly(h, c.Version, r.TransactionID, pt, b); err != nil {
				*out = answerError(h, rp.Partition, err)
				continue
			}
			pp, err := writePartition(c.Ctx, h, pt, b, frame, implicitID(c.Version, r.TransactionID))
			if err != nil {
				// Earlier batches of the partition may be written and
				// unanswered (resolver appendLocked): the frame is kept.
				settled = false
				*out = refused(h, pt, b.Transactional, err)
				continue
			}
			held = held || pp.HoldsBatches()
			waits = append(waits, pending{out: out, target: pt, pp: pp})
		}
	}
	// A pooled frame nothing holds any more (every batch written, the
	// store keeping none of them until answered, the tail cache holding
	// its own reference) goes back now, before the fdatasync, so that the
	// connections' next frames can be read into it.
	early := c.Frame != nil && settled && !held
	if early {
		c.Frame.Release()
	}
	// Requests in effect one at a time: every batch of this request is written, in request order; the
	// connection's next request may start now, while these are synced, so
	// that one group commit covers both (D1 still holds: nothing below is
	// answered before Wait).
	c.Appended()
	synced := time.Now()
	for _, w := range waits {
		*w.out = produced(h, w.target, w.pp)
	}
	if c.Frame != nil && settled && !early {
		c.Frame.Release() // every write answered: the store holds what it keeps
	}
	return resp, time.Since(synced)
}

// parse parses every partition's records once (resolver ParseBatches),
// by topic and partition index as in the request: the checks here and
// the write below read that one parse.
func parse(r *kmsg.ProduceRequest) [][]resolver.Batches {
	out := make([][]resolver.Batches, len(r.Topics))
	for i, rt := range r.Topics {
		out[i] = make([]resolver.Batches, len(rt.Partitions))
		for j, rp := range rt.Partitions {
			out[i][j] = resolver.ParseBatches(rp.Records)
		}
	}
	return out
}

// anyTransactional reports whether any partition's records are a
// transactional batch.
func anyTransactional(parsed [][]resolver.Batches) bool {
	for _, t := range parsed {
		for _, b := range t {
			if b.Transactional {
				return true
			}
		}
	}
	return false
}

// checkCodec refuses zstd below Produce v7 (KIP-110), as Kafka's
// ProduceRequest.validateRecords does.
func checkCodec(version int16, b *resolver.Batches) error {
	if b.HasCodec && b.Codec == resolver.CodecZstd && version < 7 {
		return fmt.Errorf("%w: zstd needs Produce v7, got v%d", kerr.UnsupportedCompressionType, version)
	}
	return nil
}

// pending is one partition's written, not yet durable, append.
type pending struct {
	out    *kmsg.ProduceResponseTopicPartition
	target *target
	pp     *resolver.PendingProduce
}

// frameBacking describes the request's frame buffer to the store when it
// is pooled, or when more than one partition's records are slices of it.
// Each records slice is handed over without a copy (kmsg does not copy),
// but a cached slice keeps the whole frame alive: the store's tail cache
// must charge the frame, once, not the slices (storage C5). A pooled
// frame is also held by each cached slice until it leaves the cache, and
// by each fetch served from it until written (storage "Pooled frames").
// An unpooled single-partition request's records are most of its frame
// and are charged as they are.
func frameBacking(r *kmsg.ProduceRequest, frameSize int, pooled *bufpool.Shared) *resolver.Backing {
	if pooled != nil {
		return resolver.NewPooledBacking(pooled)
	}
	n := 0
	for _, rt := range r.Topics {
		n += len(rt.Partitions)
	}
	if n <= 1 {
		return nil
	}
	return resolver.NewBacking(frameSize)
}

// target is one partition of a produce request, resolved once
// (Host.Resolve) by whichever of
// the implicit add to a transaction and the write asks first.
type target struct {
	topic     string
	partition int32
	resolved  bool
	h         resolver.Partition
	err       error
}

// resolve resolves t once; later calls return the first answer.
func (t *target) resolve(h Host) (resolver.Partition, error) {
	if !t.resolved {
		t.h, t.err = h.Resolve(t.topic, t.partition)
		t.resolved = true
	}
	return t.h, t.err
}

// writePartition writes one partition's batches without waiting for
// durability, auto-creating the topic when allowed. In a cluster, a
// transactional batch refused as not registered is verified across
// nodes and, for Produce v12+ (txnID set), added to its transaction by
// the coordinator (implicit adds across nodes) before it is tried again.
func writePartition(ctx context.Context, host Host, t *target, b *resolver.Batches, frame *resolver.Backing, txnID *string) (*resolver.PendingProduce, error) {
	h, err := t.resolve(host)
	if err != nil {
		return nil, err
	}
	if err := host.RouteError(t.topic, t.partition); err != nil { // NOT_LEADER_OR_FOLLOWER routing
		return nil, err
	}
	pp, err := h.ProduceAsync(*b, frame)
	if err == nil || !host.Cluster() || !errors.Is(err, resolver.ErrInvalidTxnState) {
		return pp, err
	}
	if err := verifyTxn(ctx, host, t.topic, t.partition, b, err); err != nil {
		if txnID == nil || !errors.Is(err, resolver.ErrInvalidTxnState) {
			return nil, err
		}
		if err := addAcrossNodes(ctx, host, *txnID, t, b, err); err != nil {
			return nil, err
		}
	}
	// Registered since: the refusal wrote nothing and left the batch as
	// it was but for a LogAppendTime stamp, which the retry sets again.
	return h.ProduceAsync(*b, frame)
}
