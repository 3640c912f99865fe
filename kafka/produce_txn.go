package kafka

import (
	"fmt"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
)

// minImplicitAddProduceVersion is the Produce version from which a
// transactional produce adds its partition to the transaction itself
// (KIP-890 part 2, transaction version 2).
const minImplicitAddProduceVersion = 12

// addToTxnImplicitly adds the partition of a transactional batch to its
// producer's transaction, durably, before the batch is appended, for
// Produce v12+ (KIP-890 implicit adds). Older versions, non-transactional batches and
// requests without a transactional id are left to the resolver's check
// (KIP-890 part 1).
func (s *Server) addToTxnImplicitly(version int16, txnID *string, t *produceTarget, b *resolver.Batches) error {
	if version < minImplicitAddProduceVersion || txnID == nil || !b.TxnProducer {
		return nil
	}
	pid, epoch := b.ProducerID, b.ProducerEpoch
	topic, partition := t.topic, t.partition
	c, err := s.txnCoordinator()
	if err != nil {
		return err
	}
	if _, err := t.resolve(s); err != nil {
		return err
	}
	code := c.AddPartitionImplicitly(*txnID, pid, epoch, topic, partition)
	if code == 0 {
		return nil
	}
	return fmt.Errorf("%w: adding %s/%d to transaction %q", produceAddError(code), topic, partition, *txnID)
}

// produceAddError is the Produce error for a coordinator answer, as
// Kafka's ReplicaManager maps verification errors: the coordinator being
// busy is retriable NOT_ENOUGH_REPLICAS, a fenced producer is
// INVALID_PRODUCER_EPOCH, anything else is the coordinator's own.
func produceAddError(code int16) error {
	switch ke := kerr.ErrorForCode(code); ke {
	case kerr.ConcurrentTransactions, kerr.CoordinatorNotAvailable, kerr.CoordinatorLoadInProgress, kerr.NotCoordinator:
		return kerr.NotEnoughReplicas
	case kerr.ProducerFenced:
		return kerr.InvalidProducerEpoch
	default:
		return ke
	}
}
