package resolver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kgateway/kgateway/topicconfig"
)

// recordCheck is what Produce runs on each record of a batch for a topic
// with these settings: nil, or the key requirement's check on a compacted topic. Its
// error is a RecordError's message.
func recordCheck(c topicconfig.Clean) func(RecordMeta) error {
	if !c.Compact {
		return nil
	}
	return refuseNullKey
}

// refuseNullKey implements the key requirement: a compacted topic keeps the latest record per key,
// so a record without one could never be cleaned; Kafka's LogValidator
// refuses it, and the whole batch with it.
func refuseNullKey(m RecordMeta) error {
	if m.NullKey {
		return errors.New("Compacted topic cannot accept message without key")
	}
	return nil
}

// RecordError is one refused record of a produced batch (KIP-467): its
// index in the batch and why, in Kafka's words.
type RecordError struct {
	BatchIndex int32
	Message    string
}

// RecordErrors refuses a produced batch for some of its records: every
// one the check refused is listed, none of the batch is appended (the key requirement).
// It wraps ErrInvalidRecord.
type RecordErrors struct {
	Records []RecordError
}

// Error is Kafka's message for the batch: the count and the first three.
func (e *RecordErrors) Error() string {
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

func (e *RecordErrors) Unwrap() error { return ErrInvalidRecord }

// checkRecords runs check on every record of batch b, going on past a
// refused one so that all are listed as Kafka lists them; the messages
// name the partition as Kafka's do. An error of the walk itself (a
// corrupt or malformed batch) is returned as it is.
func (p *partition) checkRecords(b []byte, limit int64, check func(RecordMeta) error) error {
	if check == nil {
		return scanRecords(b, limit, nil)
	}
	var refused []RecordError
	index := int32(0)
	err := scanRecords(b, limit, func(m RecordMeta) error {
		if err := check(m); err != nil {
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
		return &RecordErrors{Records: refused}
	}
	return nil
}
