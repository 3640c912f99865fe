package txn

import (
	"slices"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// AddPartitionsToTxn handles AddPartitionsToTxn v0–3, the client form
// (v4+, the brokers' batched form, is batch.go). Kafka's order of checks: unknown
// partitions get UNKNOWN_TOPIC_OR_PARTITION and the others
// OPERATION_NOT_ATTEMPTED; then the transaction's own checks (Kafka's transaction errors) apply to
// every partition. Partitions are added durably before they are
// registered with the resolver (durable partition adds), so a transactional batch is never
// accepted on a partition the transaction could forget to mark.
func (c *Coordinator) AddPartitionsToTxn(req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse {
	if req.Version >= 4 {
		return c.addPartitionsBatch(req)
	}
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	var tps []offsets.TopicPartition
	unknown := map[offsets.TopicPartition]bool{}
	for _, rt := range req.Topics {
		for _, p := range rt.Partitions {
			tp := offsets.TopicPartition{Topic: rt.Topic, Partition: p}
			if !c.cfg.Topics.PartitionExists(rt.Topic, p) {
				unknown[tp] = true
			}
			tps = append(tps, tp)
		}
	}
	var code int16
	if len(unknown) == 0 {
		code = c.addPartitions(&addReq{pid: req.ProducerID, epoch: req.ProducerEpoch, tps: tps, tv: tv1}, req.TransactionalID)
	}
	code = fencedFor(code, req.Version, 2)
	for _, rt := range req.Topics {
		t := kmsg.NewAddPartitionsToTxnResponseTopic()
		t.Topic = rt.Topic
		for _, p := range rt.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, code
			if len(unknown) > 0 {
				rp.ErrorCode = errNotAttempted
				if unknown[offsets.TopicPartition{Topic: rt.Topic, Partition: p}] {
					rp.ErrorCode = errUnknownTopic
				}
			}
			t.Partitions = append(t.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// addPartitions adds r's partitions to the ongoing transaction (starting one if
// need be), durably, then registers them with the resolver; adds of id
// queued meanwhile are written together (addQueue).
func (c *Coordinator) addPartitions(r *addReq, id string) int16 {
	if id == "" {
		return errInvalidRequest
	}
	c.mu.Lock()
	t := c.mu.txns[id]
	c.mu.Unlock()
	if t == nil {
		return errInvalidMapping
	}
	return c.queueAdd(&t.adds, id, r)
}

// register registers tps, partitions of t's durable Ongoing transaction,
// with their leaders. A partition that fails stays durably in the
// transaction but unregistered: its batches are refused and its marker
// is a no-op (idempotent). The answer is then retriable
// COORDINATOR_NOT_AVAILABLE, and the client's retry registers it again
// (durable partition adds); UNKNOWN_TOPIC_OR_PARTITION if the partition is gone.
func (c *Coordinator) register(id string, t *txn, tps []offsets.TopicPartition) int16 {
	for _, tp := range tps {
		if err := c.parts.AddTxnPartition(tp.Topic, tp.Partition, t.st.ProducerID, t.st.Epoch); err != nil {
			c.log.Warn("txn-register-partition-failed", zap.String("transactional-id", id),
				zap.Stringer("partition", tp), zap.Error(err))
			if !c.cfg.Topics.PartitionExists(tp.Topic, tp.Partition) {
				return errUnknownTopic
			}
			return errCoordinatorNA
		}
	}
	return errNone
}

// AddOffsetsToTxn handles AddOffsetsToTxn v0–3: the group joins the
// transaction, so its TxnOffsetCommit offsets are completed with it (pending TxnOffsetCommit offsets).
func (c *Coordinator) AddOffsetsToTxn(req *kmsg.AddOffsetsToTxnRequest) *kmsg.AddOffsetsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	resp.ErrorCode = fencedFor(c.addGroup(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group, tv1), req.Version, 2)
	return resp
}

func (c *Coordinator) addGroup(id string, pid int64, epoch int16, group string, tv int8) int16 {
	if len(group) > maxIDLen {
		return errInvalidGroupID
	}
	t, code := c.producerTxn(id, pid, epoch)
	if code != errNone {
		return code
	}
	defer t.mu.Unlock()
	if t.st.State == offsets.TxnOngoing && slices.Contains(t.st.Groups, group) {
		return errNone
	}
	next := c.begin(t.st, tv)
	next.Groups = append(slices.Clone(next.Groups), group)
	if len(next.Groups) > c.cfg.MaxGroupsPerTxn || c.overHeld(t, next) {
		return errPolicy // The transaction bounds
	}
	if err := c.persist(t, next); err != nil {
		return errCoordinatorNA
	}
	return errNone
}

// producerTxn returns id's transaction locked if (pid, epoch) is its
// producer and it can take a new partition or group: Kafka's checks in
// handleAddPartitionsToTransaction (Kafka's transaction errors).
func (c *Coordinator) producerTxn(id string, pid int64, epoch int16) (*txn, int16) {
	if id == "" {
		return nil, errInvalidRequest
	}
	t := c.lookup(id)
	if t == nil {
		return nil, errInvalidMapping
	}
	if code := checkProducer(t.st, pid, epoch); code != errNone {
		t.mu.Unlock()
		return nil, code
	}
	return t, errNone
}

// checkProducer is producerTxn's check of (pid, epoch) against st.
func checkProducer(st offsets.Txn, pid int64, epoch int16) int16 {
	switch {
	case st.ProducerID != pid:
		return errInvalidMapping
	case st.Epoch != epoch:
		return errFenced
	case st.State == offsets.TxnPrepareCommit || st.State == offsets.TxnPrepareAbort:
		return errConcurrent
	}
	return errNone
}

// begin returns st as Ongoing: a transaction that was not running starts
// now, at transaction version tv, with nothing in it yet.
func (c *Coordinator) begin(st offsets.Txn, tv int8) offsets.Txn {
	now := c.clock.Now()
	if st.State != offsets.TxnOngoing {
		st.State, st.StartTime, st.Version = offsets.TxnOngoing, now, tv
		st.Partitions, st.Groups = nil, nil
		st.NextProducerID = noPID
	}
	st.UpdateTime = now
	return st
}

// Transaction versions: 1 is KIP-98's (explicit AddPartitionsToTxn and
// AddOffsetsToTxn, one epoch for many transactions), 2 is KIP-890 part
// 2's (implicit adds, an epoch bump per transaction).
const (
	tv1 int8 = 1
	tv2 int8 = 2
)

// version is the transaction version st's current or last transaction
// runs at (records written before version 2 existed hold 0).
func version(st offsets.Txn) int8 {
	if st.Version >= tv2 {
		return tv2
	}
	return tv1
}

// AddPartitionImplicitly adds one partition to the ongoing transaction of
// id (starting one if need be) at transaction version 2 (KIP-890 implicit adds): Produce
// v12+ calls it for a transactional batch before the batch is appended,
// instead of the client's AddPartitionsToTxn. Kafka's checks (Kafka's transaction errors): the
// producer id and epoch must be current (a previous epoch is
// PRODUCER_FENCED), a transaction being completed is
// CONCURRENT_TRANSACTIONS. A running transaction keeps its version (a transaction's version).
func (c *Coordinator) AddPartitionImplicitly(id string, pid int64, epoch int16, topic string, partition int32) int16 {
	return c.AddPartitionImplicitlyWaiting(id, pid, epoch, topic, partition, nil)
}

// AddPartitionImplicitlyWaiting is AddPartitionImplicitly for a caller
// that holds a bounded resource while it waits for the answer (the
// cluster relay's answer slots): waiting, if not nil, is called once if
// the add must wait for the completion of the id's previous transaction
// (waiting for a completion, addqueue.go), so the caller can give the
// resource up meanwhile; an add arriving during that completion whose
// waiting answers false gets CONCURRENT_TRANSACTIONS at once.
func (c *Coordinator) AddPartitionImplicitlyWaiting(id string, pid int64, epoch int16, topic string, partition int32, waiting func() bool) int16 {
	if c.closing.Load() {
		return errCoordinatorNA
	}
	if !c.cfg.Topics.PartitionExists(topic, partition) {
		return errUnknownTopic
	}
	return c.addPartitions(&addReq{pid: pid, epoch: epoch, tps: []offsets.TopicPartition{{Topic: topic, Partition: partition}},
		tv: tv2, waiting: waiting}, id)
}

// newPartitions returns the partitions of tps not in have, once each.
func newPartitions(have, tps []offsets.TopicPartition) []offsets.TopicPartition {
	seen := make(map[offsets.TopicPartition]bool, len(have))
	for _, tp := range have {
		seen[tp] = true
	}
	var out []offsets.TopicPartition
	for _, tp := range tps {
		if !seen[tp] {
			seen[tp] = true
			out = append(out, tp)
		}
	}
	return out
}
