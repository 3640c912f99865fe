package produce

import (
	"context"
	"fmt"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// minImplicitAddVersion is the Produce version from which a
// transactional produce adds its partition to the transaction itself
// (KIP-890 part 2, transaction version 2).
const minImplicitAddVersion = 12

// addToTxnImplicitly adds the partition of a transactional batch to its
// producer's transaction, durably, before the batch is appended, for
// Produce v12+ (KIP-890 implicit adds). Older versions, non-transactional batches and
// requests without a transactional id are left to the resolver's check
// (KIP-890 part 1).
func addToTxnImplicitly(h Host, version int16, txnID *string, t *target, b *resolver.Batches) error {
	if version < minImplicitAddVersion || txnID == nil || !b.TxnProducer || h.Cluster() {
		return nil // in a cluster: addAcrossNodes, once the leader's registrations say it is needed
	}
	pid, epoch := b.ProducerID, b.ProducerEpoch
	topic, partition := t.topic, t.partition
	c, err := h.Txns()
	if err != nil {
		return err
	}
	if _, err := t.resolve(h); err != nil {
		return err
	}
	code := c.AddPartitionImplicitly(*txnID, pid, epoch, topic, partition)
	if code == 0 {
		return nil
	}
	return fmt.Errorf("%w: adding %s/%d to transaction %q", addError(code), topic, partition, *txnID)
}

// implicitID is the transactional id of a Produce v12+ request, whose
// transactional batches add their partitions themselves (KIP-890
// implicit adds); nil below v12.
func implicitID(version int16, txnID *string) *string {
	if version < minImplicitAddVersion {
		return nil
	}
	return txnID
}

// addAcrossNodes has the coordinator add the partition of a transactional
// batch refused as not registered (refused) to its producer's
// transaction, in a cluster (implicit adds across nodes): the leader
// registers only what the coordinator made durable, so the batch is
// appended only if the coordinator's NONE is followed by its
// registration, at the batch's epoch and undecided, in etcd (Verify).
// An add the coordinator refuses — the transaction being decided, or
// its epoch bumped by the decision — answers as on a single node
// (addError); one it cannot answer now is retriable NOT_ENOUGH_REPLICAS.
func addAcrossNodes(ctx context.Context, h Host, txnID string, t *target, b *resolver.Batches, refused error) error {
	code, err := h.AddTxnPartition(ctx, txnID, t.topic, t.partition, b.ProducerID, b.ProducerEpoch)
	switch {
	case err != nil:
		return fmt.Errorf("%w: adding %s/%d to transaction %q: %v", kerr.NotEnoughReplicas, t.topic, t.partition, txnID, err)
	case code != 0:
		return fmt.Errorf("%w: adding %s/%d to transaction %q", addError(code), t.topic, t.partition, txnID)
	}
	return verifyTxn(ctx, h, t.topic, t.partition, b, refused)
}

// addError is the Produce error for a coordinator answer, as Kafka's
// ReplicaManager maps verification errors: the coordinator being busy
// is retriable NOT_ENOUGH_REPLICAS, a fenced producer is
// INVALID_PRODUCER_EPOCH, anything else is the coordinator's own.
func addError(code int16) error {
	switch ke := kerr.ErrorForCode(code); ke {
	case kerr.ConcurrentTransactions, kerr.CoordinatorNotAvailable, kerr.CoordinatorLoadInProgress, kerr.NotCoordinator:
		return kerr.NotEnoughReplicas
	case kerr.ProducerFenced:
		return kerr.InvalidProducerEpoch
	default:
		return ke
	}
}

// verifyTxn checks, in a cluster, a transactional batch the resolver
// refused as not registered against the coordinator's registration
// (verification across nodes): nil when it is registered (and now applied here), refused (the
// resolver's error) when it is not, and NOT_ENOUGH_REPLICAS, retriable,
// when etcd cannot tell now — as Kafka answers a verification its
// coordinator could not complete, so the client retries the batch
// instead of failing it.
func verifyTxn(ctx context.Context, h Host, topic string, partition int32, b *resolver.Batches, refused error) error {
	if !b.TxnProducer {
		return refused
	}
	pid, epoch := b.ProducerID, b.ProducerEpoch
	registered, err := h.VerifyTxn(ctx, topic, partition, pid, epoch)
	switch {
	case err != nil:
		return fmt.Errorf("%w: verifying the transaction of producer %d: %v", kerr.NotEnoughReplicas, pid, err)
	case !registered:
		return refused
	}
	return nil
}

// TxnAbortable answers a transactional batch refused for a partition
// not in its producer's transaction TRANSACTION_ABORTABLE instead of
// INVALID_TXN_STATE from Produce v11 on (KIP-890): the producer can
// abort and go on instead of failing for good, as Apache Kafka 4.4
// answers (test/kafkadiff); v10 and older clients keep
// INVALID_TXN_STATE.
func TxnAbortable(resp *kmsg.ProduceResponse) {
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			if p := &resp.Topics[i].Partitions[j]; p.ErrorCode == kerr.InvalidTxnState.Code {
				p.ErrorCode = kerr.TransactionAbortable.Code
			}
		}
	}
}
