package topicconfig

import (
	"errors"
	"fmt"
	"math"

	"github.com/kgateway/kgateway/recordbatch"
)

// RecordRules are the topic configs Produce checks every produced record
// against, as Kafka's LogValidator does.
type RecordRules struct {
	// CreateTime: message.timestamp.type is CreateTime, so each record's
	// timestamp must lie within [now - BeforeMaxMs, now + AfterMaxMs]
	// (KIP-937's message.timestamp.before.max.ms and
	// message.timestamp.after.max.ms); a LogAppendTime topic stamps the
	// batch instead and checks nothing.
	CreateTime              bool
	BeforeMaxMs, AfterMaxMs int64
	// Compact: cleanup.policy has compact, so every record needs a key.
	Compact bool
	// MaxRecordBytes is max.decompressed.message.bytes: the largest body
	// (the record's declared length) of a record in a compressed batch.
	MaxRecordBytes int32
}

// ErrTimestamp marks a record refused for its timestamp (Kafka's
// INVALID_TIMESTAMP); the other per-record refusals are INVALID_RECORD.
var ErrTimestamp = errors.New("invalid timestamp")

// ErrRecordBody marks a record of a compressed batch whose body is larger
// than max.decompressed.message.bytes. It wraps recordbatch's
// ErrInvalidRecord and fails the whole batch at once, as Kafka's
// decompressing iterator does (an InvalidRecordException, not a list of
// record errors).
var ErrRecordBody = fmt.Errorf("%w: record larger than max.decompressed.message.bytes", recordbatch.ErrInvalidRecord)

var errNullKey = errors.New("Compacted topic cannot accept message without key")

// Check is the check of each record of a batch whose header has base and
// max timestamps base and maxTS and attributes attrs, produced at now
// (Unix ms). Only a compressed batch is decompressed, so only its records
// are bounded by max.decompressed.message.bytes. It is nil when there is
// nothing to check. Per record, in Kafka's order: the body bound, the key
// requirement, then the timestamp, which must lie within a CreateTime
// topic's bounds (a record without one, -1, is not checked).
//
// Only a broker stamps LogAppendTime, but a producer may set the
// timestamp-type bit. Kafka 4.4 reads such a batch's records at its max
// timestamp, as the bit says: on a CreateTime topic that is the
// timestamp the bounds check (the batch is then stored as CreateTime,
// resolver/produce.go); on a LogAppendTime topic every record is
// INVALID_TIMESTAMP.
func (r RecordRules) Check(base, maxTS, now int64, attrs int16) func(recordbatch.RecordMeta) error {
	body := attrs&recordbatch.CodecMask != 0 && r.MaxRecordBytes > 0 && r.MaxRecordBytes < MaxRecordBody
	stamped := attrs&recordbatch.LogAppendTimeBit != 0
	refuseStamped := stamped && !r.CreateTime
	if !body && !r.Compact && !r.CreateTime && !refuseStamped {
		return nil
	}
	lo, hi := r.bounds(now)
	return func(m recordbatch.RecordMeta) error {
		if body && m.Size > r.MaxRecordBytes {
			return fmt.Errorf("%w: record %d has %d bytes, max.decompressed.message.bytes is %d", ErrRecordBody, m.OffsetDelta, m.Size, r.MaxRecordBytes)
		}
		if r.Compact && m.NullKey {
			return errNullKey
		}
		if refuseStamped {
			return fmt.Errorf("%w: Invalid timestamp type in message with offset %d. Producer should not set timestamp type to LogAppendTime.",
				ErrTimestamp, m.OffsetDelta)
		}
		ts := base + m.TimestampDelta
		if stamped {
			ts = maxTS
		}
		if r.CreateTime && ts != -1 && (ts < lo || ts > hi) {
			return fmt.Errorf("%w: Timestamp %d of message with offset %d is out of range. The timestamp should be within [%d, %d]",
				ErrTimestamp, ts, m.OffsetDelta, lo, hi)
		}
		return nil
	}
}

// bounds are the least and greatest timestamps a record produced at now
// may have, saturated at int64's range (the defaults, Long.MAX_VALUE,
// mean no bound).
func (r RecordRules) bounds(now int64) (lo, hi int64) {
	lo, hi = math.MinInt64, math.MaxInt64
	if now >= 0 && r.BeforeMaxMs >= 0 {
		lo = now - r.BeforeMaxMs
	}
	if now >= 0 && r.AfterMaxMs >= 0 && r.AfterMaxMs <= math.MaxInt64-now {
		hi = now + r.AfterMaxMs
	}
	return lo, hi
}
