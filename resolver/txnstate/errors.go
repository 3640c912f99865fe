package txnstate

import "errors"

// The errors Set reports; the resolver re-exports them under the same
// names, and kafka/ maps them to INVALID_PRODUCER_EPOCH and
// INVALID_TXN_STATE.
var (
	ErrInvalidProducerEpoch = errors.New("resolver: invalid producer epoch")
	// ErrInvalidTxnState: a transactional batch for a partition that is
	// not in its producer's ongoing transaction (KIP-890 part 1).
	ErrInvalidTxnState = errors.New("resolver: invalid transaction state")
	// ErrConcurrentTransactions: a transactional batch that would start
	// its producer's transaction on the partition after the coordinator
	// decided it, before its marker (a decided registration takes no
	// first batch); retriable, as Kafka's verification answers
	// CONCURRENT_TRANSACTIONS while a transaction completes.
	ErrConcurrentTransactions = errors.New("resolver: transaction being completed")
)
