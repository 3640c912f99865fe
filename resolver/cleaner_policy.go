package resolver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kgateway/kgateway/topicconfig"
)

// RecordError is one refused record of a produced batch (KIP-467): its
// index in the batch and why, in Kafka's words.
type RecordError struct {
	BatchIndex int32
	Message    string
}

// RecordErrors refuses a produced batch for some of its records
// (topicconfig.RecordRules): every one the check refused is listed, none
// of the batch is appended. It wraps ErrInvalidTimestamp when a timestamp
// was refused, else ErrInvalidRecord (Kafka's LogValidator).
type RecordErrors struct {
	Records   []RecordError
	Timestamp bool
}

// Error is Kafka's message for the batch: the count and the first three.
func (e *RecordErrors) Error() string {
	if e.Timestamp {
		return "One or more records have been rejected due to invalid timestamp"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "One or more records have been rejected due to %d record errors in total, and only showing the first three errors at most: [", len(e.Records))
	for i, r := range e.Records[:min(3, len(e.Records))] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "RecordError(batchIndex=%d, message='%s')", r.BatchIndex, r.Message)
	}
	b.WriteString("]")
	return b.String()
}

func (e *RecordErrors) Unwrap() error {
	if e.Timestamp {
		return ErrInvalidTimestamp
	}
	return ErrInvalidRecord
}

// checkRecords runs check on every record of batch b, going on past a
// refused one so that all are listed as Kafka lists them; the messages
// name the partition as Kafka's do. An error of the walk itself (a
// corrupt or malformed batch) is returned as it is.
func (p *partition) checkRecords(b []byte, limit int64, check func(RecordMeta) error) error {
	if check == nil {
		return scanRecords(b, limit, nil)
	}
	var refused []RecordError
	timestamp, index := false, int32(0)
	err := scanRecords(b, limit, func(m RecordMeta) error {
		err := check(m)
		switch {
		case err == nil:
		case errors.Is(err, topicconfig.ErrRecordBody):
			return err // the whole batch, at once
		case errors.Is(err, topicconfig.ErrTimestamp):
			timestamp = true
			refused = append(refused, RecordError{BatchIndex: index, Message: strings.TrimPrefix(err.Error(), topicconfig.ErrTimestamp.Error()+": ")})
		default:
			msg := fmt.Sprintf("%s in topic partition %s-%d", err, p.topic, p.index)
			refused = append(refused, RecordError{BatchIndex: index, Message: msg})
		}
		index++
		return nil
	})
	if err != nil {
		return err
	}
	if len(refused) > 0 {
		return &RecordErrors{Records: refused, Timestamp: timestamp}
	}
	return nil
}
