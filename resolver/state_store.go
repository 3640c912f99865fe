package resolver

import (
	"time"

	"go.uber.org/zap"

	"github.com/kgateway/kgateway/storage"
)

// stateStore owns what a partition keeps beside its log: the
// producer-state checkpoint and its producers (incremental producer checkpoints, checkpoint.go), the
// open transactions and the aborted index (the aborted-transaction index, txn_checkpoint.go), and
// their recovery when a partition opens (the checkpoint, then a replay of
// the batch headers after it, transaction recovery, partition.go). It reads and writes only
// its own metadata key prefixes and a partition's producer and
// transaction state (partition.app, partition.mu.txn and maxTS); it may
// not touch the catalog (Resolver.mu: bindings, topics, configs), the
// producer-id counter, another partition, or a log's entries (it reads
// them, through the ledger's cursorless read, and writes none).
type stateStore struct {
	store *storage.Store
	log   *zap.Logger
	now   func() time.Time
	// limits are producer expiry's expiry and the producer cap's cap.
	limits producerLimits
	// background runs f in the background unless the resolver is
	// closing, and reports whether it does; Close waits for it.
	background func(f func()) bool
}
