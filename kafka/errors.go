package kafka

import (
	"context"
	"errors"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
)

// errorCodes is the one place that maps internal errors to Kafka error
// codes (a Go error closes the connection). It names only the resolver's sentinels: the resolver returns
// every error of the layers below wrapped in ErrStorage, so nothing here
// knows of ledger/ or storage/. Checked in order with errors.Is. ErrStorage
// comes first: the resolver wraps a stored entry that fails validation as
// ErrStorage *and* the validation error, and a bad stored batch is the
// server's fault (KAFKA_STORAGE_ERROR, fail closed), not the client's
// (CORRUPT_MESSAGE).
var errorCodes = []struct {
	err  error
	code *kerr.Error
}{
	{resolver.ErrNotLeader, kerr.NotLeaderForPartition}, // before ErrStorage: a refused replication is no storage fault
	{resolver.ErrStorage, kerr.KafkaStorageError},
	{resolver.ErrUnknownTopic, kerr.UnknownTopicOrPartition},
	{resolver.ErrTopicExists, kerr.TopicAlreadyExists},
	{resolver.ErrInvalidTopic, kerr.InvalidTopicException},
	{resolver.ErrInvalidPartitions, kerr.InvalidPartitions},
	{resolver.ErrInvalidReplication, kerr.InvalidReplicationFactor},
	{resolver.ErrInvalidConfig, kerr.InvalidConfig},
	{resolver.ErrOffsetOutOfRange, kerr.OffsetOutOfRange},
	{resolver.ErrCorruptBatch, kerr.CorruptMessage},
	{resolver.ErrUnsupportedMagic, kerr.InvalidRecord}, // Kafka: produce v3+ takes magic 2 only
	{resolver.ErrInvalidRecord, kerr.InvalidRecord},
	{resolver.ErrInvalidTimestamp, kerr.InvalidTimestamp},
	{resolver.ErrMessageTooLarge, kerr.MessageTooLarge},
	{resolver.ErrOutOfOrderSequence, kerr.OutOfOrderSequenceNumber},
	{resolver.ErrInvalidProducerEpoch, kerr.InvalidProducerEpoch},
	{resolver.ErrUnknownProducerID, kerr.UnknownProducerID},
	{resolver.ErrCoordinatorFenced, kerr.TransactionCoordinatorFenced},
	{resolver.ErrInvalidTxnState, kerr.InvalidTxnState},
	{resolver.ErrConcurrentTransactions, kerr.NotEnoughReplicas}, // as Kafka maps its verification's CONCURRENT_TRANSACTIONS
	{resolver.ErrTopicDeletionDisabled, kerr.TopicDeletionDisabled},
	{context.DeadlineExceeded, kerr.RequestTimedOut},
}

// errCode returns the Kafka error code for err (0 for nil). An error this
// table does not know is UNKNOWN_SERVER_ERROR: the client sees a failure,
// never a wrong success.
func errCode(err error) int16 {
	if err == nil {
		return 0
	}
	if ke, ok := asKerr(err); ok {
		return ke.Code
	}
	for _, e := range errorCodes {
		if errors.Is(err, e.err) {
			return e.code.Code
		}
	}
	return kerr.UnknownServerError.Code
}

// errMessage is the per-topic/partition error message for err (nil for
// nil), for versions that carry one.
func errMessage(err error) *string {
	if err == nil {
		return nil
	}
	m := err.Error()
	return &m
}

// kafkaWorded is an error whose message is Kafka's own wording for the
// same refusal (what Kafka's tools print), while errors.Is still finds the
// sentinel that gives its code.
type kafkaWorded struct {
	sentinel error
	msg      string
}

func (e kafkaWorded) Error() string { return e.msg }
func (e kafkaWorded) Unwrap() error { return e.sentinel }

// asKerr finds a Kafka error a handler wrapped itself (for codes that no
// internal sentinel stands for, like INVALID_REQUIRED_ACKS).
func asKerr(err error) (*kerr.Error, bool) {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke, true
	}
	return nil, false
}
