package kafka

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
)

func TestErrCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want *kerr.Error
	}{
		{fmt.Errorf("%w: crc", resolver.ErrCorruptBatch), kerr.CorruptMessage},
		// A stored entry failing validation is the server's fault.
		{fmt.Errorf("%w: entry at 5: %w", resolver.ErrStorage, resolver.ErrCorruptBatch), kerr.KafkaStorageError},
		{fmt.Errorf("wrapped: %w", resolver.ErrOffsetOutOfRange), kerr.OffsetOutOfRange},
		{resolver.ErrUnknownTopic, kerr.UnknownTopicOrPartition},
		{resolver.ErrOutOfOrderSequence, kerr.OutOfOrderSequenceNumber},
		{resolver.ErrInvalidProducerEpoch, kerr.InvalidProducerEpoch},
		{resolver.ErrUnknownProducerID, kerr.UnknownProducerID},
		{resolver.ErrInvalidTxnState, kerr.InvalidTxnState},
		{resolver.ErrMessageTooLarge, kerr.MessageTooLarge},
		// What the resolver makes of a failed log: the cause stays wrapped.
		{fmt.Errorf("%w: append: %w", resolver.ErrStorage, errors.New("log failed")), kerr.KafkaStorageError},
		{fmt.Errorf("%w: acks 7", kerr.InvalidRequiredAcks), kerr.InvalidRequiredAcks},
		{errors.New("surprise"), kerr.UnknownServerError},
	} {
		if got := errCode(tc.err); got != tc.want.Code {
			t.Errorf("errCode(%v) = %d, want %s (%d)", tc.err, got, tc.want.Message, tc.want.Code)
		}
	}
	if errCode(nil) != 0 || errMessage(nil) != nil {
		t.Error("nil error must map to 0 and no message")
	}
}
