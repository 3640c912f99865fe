package resolver

import (
	"encoding/binary"
	"fmt"

	"github.com/kgateway/kgateway/recordbatch"
	"github.com/kgateway/kgateway/storage"
)

// The record batch format is recordbatch's; these names keep the
// resolver's code as it was when the format lived here, and re-export
// what kafka/ needs (kafka/ imports no package below the resolver).

type batchHeader = recordbatch.Header

// Codec is a record batch's compression codec (recordbatch.Codec).
type Codec = recordbatch.Codec

// The codecs (attributes bits 0-2).
const (
	CodecNone   = recordbatch.CodecNone
	CodecGzip   = recordbatch.CodecGzip
	CodecSnappy = recordbatch.CodecSnappy
	CodecLZ4    = recordbatch.CodecLZ4
	CodecZstd   = recordbatch.CodecZstd
)

// RecordMeta is what a walk of a batch reports of each record.
type RecordMeta = recordbatch.RecordMeta

const (
	batchHeaderLen   = recordbatch.HeaderLen
	magicOff         = recordbatch.MagicOff
	batchLengthOff   = recordbatch.LengthOff
	batchLenPrefix   = recordbatch.LenPrefix
	attrsOff         = recordbatch.AttrsOff
	crcOff           = recordbatch.CRCOff
	logAppendTimeBit = recordbatch.LogAppendTimeBit
	transactionalBit = recordbatch.TransactionalBit
	controlBit       = recordbatch.ControlBit
	lastDeltaOff     = recordbatch.LastDeltaOff
	baseTSOff        = recordbatch.BaseTSOff
	maxTSOff         = recordbatch.MaxTSOff
	producerIDOff    = recordbatch.ProducerIDOff
	epochOff         = recordbatch.EpochOff
	baseSeqOff       = recordbatch.BaseSeqOff
	countOff         = recordbatch.CountOff
)

// BatchTransactional reports whether b starts with a transactional batch
// (recordbatch.BatchTransactional).
func BatchTransactional(b []byte) bool {
	trace("peek")
	return recordbatch.BatchTransactional(b)
}

// BatchCodec is the codec of the batch at the start of b
// (recordbatch.BatchCodec).
func BatchCodec(b []byte) (Codec, bool) {
	trace("peek")
	return recordbatch.BatchCodec(b)
}

var castagnoli = recordbatch.Castagnoli

func decodeHeader(b []byte) batchHeader                      { return recordbatch.DecodeHeader(b) }
func parseBatch(b []byte) (batchHeader, int, error)          { return recordbatch.Parse(b) }
func splitBatches(b []byte) ([][]byte, []batchHeader, error) { return recordbatch.Split(b) }
func setBaseOffset(b []byte, off Offset)                     { recordbatch.SetBaseOffset(b, off) }
func setLogAppendTime(b []byte, now int64)                   { recordbatch.SetLogAppendTime(b, now) }
func setCreateTime(b []byte)                                 { recordbatch.SetCreateTime(b) }
func seqAdd(seq, n int32) int32                              { return recordbatch.SeqAdd(seq, n) }
func decompressedLimit(maxMessageBytes int32) int64 {
	return recordbatch.DecompressedLimit(maxMessageBytes)
}
func scanRecords(b []byte, limit int64, fn func(RecordMeta) error) error {
	return recordbatch.ScanRecords(b, limit, fn)
}
func scanStoredRecords(b []byte, limit int64, fn func(RecordMeta) error) error {
	return recordbatch.ScanStoredRecords(b, limit, fn)
}

// ValidateStored checks one stored entry before it is served (read flow
// step 5): it must be exactly one batch (magic 2, its length the entry's
// size, a sound header) whose base offset and record count match the
// index. Anything else fails closed.
//
// It does not recompute the batch CRC32C nor walk the records: Produce
// checked both before the entry was written (Parse), and what is
// served is provably those bytes: a disk read verifies the storage frame's
// CRC32C, which covers every payload byte, and a tail-cache read serves the
// very slice Produce validated. Checking again cost a second CRC pass over
// every served byte plus a walk over every record, on the hottest path.
// validateViewed is ValidateStored for an entry of a compacted view (the view log):
// the batch starts at or after the entry and ends where it ends.
func validateViewed(e storage.Entry) error {
	if len(e.Payload) < batchHeaderLen {
		return fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorruptBatch, len(e.Payload))
	}
	h := decodeHeader(e.Payload)
	if h.BaseOffset < e.Offset || h.BaseOffset+Offset(h.LastOffsetDelta)+1 != e.End() {
		return fmt.Errorf("%w: batch at %d+%d stored as view entry [%d,+%d)", ErrCorruptBatch, h.BaseOffset, h.LastOffsetDelta, e.Offset, e.Records)
	}
	e.Offset, e.Records = h.BaseOffset, h.LastOffsetDelta+1
	return ValidateStored(e)
}

func ValidateStored(e storage.Entry) error {
	b := e.Payload
	switch {
	case len(b) < batchHeaderLen:
		return fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorruptBatch, len(b))
	case b[magicOff] != 2:
		return fmt.Errorf("%w: stored magic %d", ErrCorruptBatch, int8(b[magicOff]))
	}
	if n := int64(binary.BigEndian.Uint32(b[batchLengthOff:])) + batchLenPrefix; n != int64(len(b)) {
		return fmt.Errorf("%w: batch of %d bytes stored as an entry of %d", ErrCorruptBatch, n, len(b))
	}
	h := decodeHeader(b)
	if err := h.CheckStored(); err != nil {
		return err
	}
	if span := int64(h.LastOffsetDelta) + 1; h.BaseOffset != e.Offset || span != int64(e.Records) {
		return fmt.Errorf("%w: batch [%d,+%d) stored as entry [%d,+%d)", ErrCorruptBatch, h.BaseOffset, span, e.Offset, e.Records)
	}
	return nil
}

// Decompress decompresses data, one stream in codec c, to at most limit
// bytes (recordbatch.Decompress): kafka/ decodes KIP-714 telemetry
// payloads with the record batch codecs.
func Decompress(c Codec, data []byte, limit int64) ([]byte, error) {
	return recordbatch.Decompress(c, data, limit)
}

// IsDecompressedTooLarge reports whether err is Decompress's refusal of
// output past its limit (recordbatch.IsDecompressedTooLarge).
func IsDecompressedTooLarge(err error) bool { return recordbatch.IsDecompressedTooLarge(err) }
