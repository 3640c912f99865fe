package txn

import "github.com/twmb/franz-go/pkg/kerr"

// Kafka error codes the coordinator answers with (Kafka's transaction errors).
var (
	errNone            int16 = 0
	errInvalidRequest        = kerr.InvalidRequest.Code
	errCoordinatorNA         = kerr.CoordinatorNotAvailable.Code
	errConcurrent            = kerr.ConcurrentTransactions.Code
	errInvalidTimeout        = kerr.InvalidTransactionTimeout.Code
	errFenced                = kerr.ProducerFenced.Code
	errInvalidEpoch          = kerr.InvalidProducerEpoch.Code
	errInvalidMapping        = kerr.InvalidProducerIDMapping.Code
	errInvalidTxnState       = kerr.InvalidTxnState.Code
	errUnknownTopic          = kerr.UnknownTopicOrPartition.Code
	errNotAttempted          = kerr.OperationNotAttempted.Code
	errTxnIDNotFound         = kerr.TransactionalIDNotFound.Code
	errPolicy                = kerr.PolicyViolation.Code
	errUnknownServer         = kerr.UnknownServerError.Code
	errInvalidGroupID        = kerr.InvalidGroupID.Code
)

// fencedFor maps PRODUCER_FENCED to INVALID_PRODUCER_EPOCH for request
// versions older than the one that introduced it (KIP-588), as Kafka's
// KafkaApis does: such clients know only INVALID_PRODUCER_EPOCH.
func fencedFor(code int16, version, since int16) int16 {
	if code == errFenced && version < since {
		return errInvalidEpoch
	}
	return code
}
