package txn

import (
	"slices"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// addPartitionsBatch handles AddPartitionsToTxn v4+, the form brokers send
// (KIP-890 part 1; the authorization rule has already required
// CLUSTER_ACTION): several transactions in one request, each answered on
// its own. A transaction without VerifyOnly is added as a v3 request adds
// it (AddPartitionsToTxn, durable partition adds); one with VerifyOnly changes nothing and
// asks, partition by partition, whether the partition is in the
// producer's ongoing transaction (verifyPartitions).
func (c *Coordinator) addPartitionsBatch(req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	for _, tx := range req.Transactions {
		res := kmsg.NewAddPartitionsToTxnResponseTransaction()
		res.TransactionalID = tx.TransactionalID
		var codes func(topic string, partition int32) int16
		if tx.VerifyOnly {
			codes = c.verifyPartitions(tx, req.Version)
		} else {
			codes = c.addTransaction(tx)
		}
		for _, rt := range tx.Topics {
			t := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			t.Topic = rt.Topic
			for _, p := range rt.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				rp.Partition, rp.ErrorCode = p, codes(rt.Topic, p)
				t.Partitions = append(t.Partitions, rp)
			}
			res.Topics = append(res.Topics, t)
		}
		resp.Transactions = append(resp.Transactions, res)
	}
	return resp
}

// addTransaction adds one transaction's partitions as v3 does: unknown
// partitions UNKNOWN_TOPIC_OR_PARTITION and the rest
// OPERATION_NOT_ATTEMPTED, else the transaction's own answer for all.
func (c *Coordinator) addTransaction(tx kmsg.AddPartitionsToTxnRequestTransaction) func(string, int32) int16 {
	var tps []offsets.TopicPartition
	unknown := map[offsets.TopicPartition]bool{}
	for _, rt := range tx.Topics {
		for _, p := range rt.Partitions {
			tp := offsets.TopicPartition{Topic: rt.Topic, Partition: p}
			if !c.cfg.Topics.PartitionExists(rt.Topic, p) {
				unknown[tp] = true
			}
			tps = append(tps, tp)
		}
	}
	if len(unknown) > 0 {
		return func(topic string, p int32) int16 {
			if unknown[offsets.TopicPartition{Topic: topic, Partition: p}] {
				return errUnknownTopic
			}
			return errNotAttempted
		}
	}
	code := c.addPartitions(&addReq{pid: tx.ProducerID, epoch: tx.ProducerEpoch, tps: tps, tv: tv1}, tx.TransactionalID)
	return func(string, int32) int16 { return code }
}

// verifyPartitions answers a VerifyOnly transaction as Kafka's
// TransactionCoordinator.handleVerifyPartitionsInTransaction does: the
// producer id and epoch must be the transaction's
// (INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED) and it must not be
// completing (CONCURRENT_TRANSACTIONS); then a partition in the ongoing
// transaction is NONE and any other TRANSACTION_ABORTABLE: the producer
// wrote to a partition it never added, and must abort. v4 predates
// TRANSACTION_ABORTABLE (v5, KIP-890) and gets INVALID_TXN_STATE instead.
func (c *Coordinator) verifyPartitions(tx kmsg.AddPartitionsToTxnRequestTransaction, version int16) func(string, int32) int16 {
	t, code := c.producerTxn(tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch)
	if code != errNone {
		return func(string, int32) int16 { return code }
	}
	var have []offsets.TopicPartition
	if t.st.State == offsets.TxnOngoing {
		have = slices.Clone(t.st.Partitions)
	}
	t.mu.Unlock()
	missing := kerr.TransactionAbortable.Code
	if version < 5 {
		missing = errInvalidTxnState
	}
	return func(topic string, p int32) int16 {
		if slices.Contains(have, offsets.TopicPartition{Topic: topic, Partition: p}) {
			return errNone
		}
		return missing
	}
}
