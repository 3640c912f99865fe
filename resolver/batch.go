package resolver

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/kgateway/kgateway/storage"
)

// This file is the resolver's own byte-level view of a Kafka record batch
// (magic 2). The layers below the wire protocol never import kmsg
// (docs/DESIGN.md "Layers"), so the few header fields the resolver needs are
// read here directly.
//
// Record batch v2 layout (all big-endian):
//
//	 0 baseOffset           int64   rewritten on append (not under the CRC)
//	 8 batchLength          int32   bytes after this field
//	12 partitionLeaderEpoch int32   (not under the CRC)
//	16 magic                int8    must be 2
//	17 crc                  uint32  CRC32C of bytes 21..end
//	21 attributes           int16   codec bits 0-2, timestamp type bit 3,
//	                                transactional bit 4, control bit 5
//	23 lastOffsetDelta      int32
//	27 baseTimestamp        int64
//	35 maxTimestamp         int64
//	43 producerId           int64
//	51 producerEpoch        int16
//	53 baseSequence         int32
//	57 recordCount          int32
//	61 records...

const (
	batchHeaderLen = 61 // bytes before the first record
	batchLengthOff = 8
	batchLenPrefix = 12 // baseOffset + batchLength: not counted in batchLength
	magicOff       = 16
	crcOff         = 17
	attrsOff       = 21
	lastDeltaOff   = 23
	baseTSOff      = 27
	maxTSOff       = 35
	producerIDOff  = 43
	epochOff       = 51
	baseSeqOff     = 53
	countOff       = 57

	codecMask        = 0x07
	logAppendTimeBit = 0x08
	transactionalBit = 0x10
	controlBit       = 0x20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batchHeader is the part of a record batch header the resolver uses.
type batchHeader struct {
	BaseOffset      Offset
	Attributes      int16
	LastOffsetDelta int32
	BaseTimestamp   int64
	MaxTimestamp    int64
	ProducerID      int64
	ProducerEpoch   int16
	BaseSequence    int32
	Records         int32
}

// Idempotent reports whether the batch carries a producer id (D4 applies).
func (h batchHeader) Idempotent() bool { return h.ProducerID >= 0 }

// Transactional reports the transactional attribute bit.
func (h batchHeader) Transactional() bool { return h.Attributes&transactionalBit != 0 }

// Control reports the control attribute bit: a transaction marker (X3).
func (h batchHeader) Control() bool { return h.Attributes&controlBit != 0 }

// BatchTransactional reports whether b starts with a record batch (magic 2)
// whose transactional attribute bit is set. The wire layer refuses such a
// batch in a produce request that carries no transactional id, as Kafka
// does, before anything reaches the resolver; it reads the first batch
// only, as Kafka does (Produce takes one batch per partition).
func BatchTransactional(b []byte) bool {
	if len(b) < attrsOff+2 || b[magicOff] != 2 {
		return false
	}
	return int16(binary.BigEndian.Uint16(b[attrsOff:]))&transactionalBit != 0
}

// LastSequence is the sequence of the batch's last record; sequences wrap
// at MaxInt32 back to 0 as in Kafka. It counts by lastOffsetDelta, as
// Kafka does, which a cleaned batch keeps when it loses records (L4).
func (h batchHeader) LastSequence() int32 {
	return seqAdd(h.BaseSequence, h.LastOffsetDelta)
}

// seqAdd adds to a sequence number with Kafka's wrap-around at MaxInt32.
func seqAdd(seq, n int32) int32 {
	s := int64(seq) + int64(n)
	if s > 1<<31-1 {
		s -= 1 << 31
	}
	return int32(s)
}

// parseBatch validates the record batch at the start of b and returns its
// header and total size. It checks everything that can be checked without
// reading the records: magic, lengths, CRC32C over attributes..end, record
// count against lastOffsetDelta, codec. scanRecords checks the records.
// Errors wrap ErrCorruptBatch, ErrInvalidRecord or ErrUnsupportedMagic.
func parseBatch(b []byte) (batchHeader, int, error) {
	if len(b) > magicOff && b[magicOff] != 2 {
		if m := int8(b[magicOff]); m == 0 || m == 1 {
			return batchHeader{}, 0, fmt.Errorf("%w: magic %d", ErrUnsupportedMagic, m)
		}
		return batchHeader{}, 0, fmt.Errorf("%w: magic %d", ErrCorruptBatch, int8(b[magicOff]))
	}
	if len(b) < batchHeaderLen {
		return batchHeader{}, 0, fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorruptBatch, len(b))
	}
	blen := int32(binary.BigEndian.Uint32(b[batchLengthOff:]))
	if blen < batchHeaderLen-batchLenPrefix || int64(blen) > int64(len(b)-batchLenPrefix) {
		return batchHeader{}, 0, fmt.Errorf("%w: batch length %d with %d bytes", ErrCorruptBatch, blen, len(b))
	}
	size := int(blen) + batchLenPrefix
	b = b[:size]
	if want, got := binary.BigEndian.Uint32(b[crcOff:]), crc32.Checksum(b[attrsOff:], castagnoli); want != got {
		return batchHeader{}, 0, fmt.Errorf("%w: crc %08x, computed %08x", ErrCorruptBatch, want, got)
	}
	h := decodeHeader(b)
	if err := h.check(); err != nil {
		return batchHeader{}, 0, err
	}
	return h, size, nil
}

func decodeHeader(b []byte) batchHeader {
	be := binary.BigEndian
	return batchHeader{
		BaseOffset:      Offset(be.Uint64(b)),
		Attributes:      int16(be.Uint16(b[attrsOff:])),
		LastOffsetDelta: int32(be.Uint32(b[lastDeltaOff:])),
		BaseTimestamp:   int64(be.Uint64(b[baseTSOff:])),
		MaxTimestamp:    int64(be.Uint64(b[maxTSOff:])),
		ProducerID:      int64(be.Uint64(b[producerIDOff:])),
		ProducerEpoch:   int16(be.Uint16(b[epochOff:])),
		BaseSequence:    int32(be.Uint32(b[baseSeqOff:])),
		Records:         int32(be.Uint32(b[countOff:])),
	}
}

// check validates the header fields that do not depend on the payload.
// The codes are Kafka's: LogValidator refuses inconsistent counts and
// sequences as invalid records.
func (h batchHeader) check() error {
	switch {
	case h.Records < 1:
		return fmt.Errorf("%w: record count %d", ErrInvalidRecord, h.Records)
	case int64(h.Records) != int64(h.LastOffsetDelta)+1:
		return fmt.Errorf("%w: record count %d with last offset delta %d", ErrInvalidRecord, h.Records, h.LastOffsetDelta)
	case Codec(h.Attributes&codecMask) > CodecZstd:
		return fmt.Errorf("%w: unknown compression codec %d", ErrCorruptBatch, h.Attributes&codecMask)
	case h.ProducerID < -1:
		return fmt.Errorf("%w: producer id %d", ErrInvalidRecord, h.ProducerID)
	case h.Idempotent() && (h.ProducerEpoch < 0 || (h.BaseSequence < 0 && !h.Control())):
		// A marker carries no sequence (base sequence -1), as in Kafka.
		return fmt.Errorf("%w: producer %d with epoch %d and sequence %d", ErrInvalidRecord, h.ProducerID, h.ProducerEpoch, h.BaseSequence)
	}
	return nil
}

// splitBatches validates the header of a produce records blob, which holds
// exactly one batch (Produce v3+, as Kafka's ProduceRequest.validateRecords
// requires), and returns it with its header. The slices keep appendLocked
// general; they hold one element. A second whole batch is INVALID_RECORD,
// as in Kafka; bytes after the batch that are no batch are corrupt.
func splitBatches(blob []byte) ([][]byte, []batchHeader, error) {
	if len(blob) == 0 {
		return nil, nil, fmt.Errorf("%w: no record batch", ErrInvalidRecord)
	}
	h, n, err := parseBatch(blob)
	if err != nil {
		return nil, nil, err
	}
	if rest := blob[n:]; len(rest) > 0 {
		if _, _, err := parseBatch(rest); err == nil {
			return nil, nil, fmt.Errorf("%w: more than one record batch for a partition", ErrInvalidRecord)
		}
		return nil, nil, fmt.Errorf("%w: %d bytes after the record batch", ErrCorruptBatch, len(rest))
	}
	switch {
	case h.Control():
		// Only the resolver writes control batches (markers, X8), as in
		// Kafka: "clients are not allowed to write control records".
		return nil, nil, fmt.Errorf("%w: clients may not write control batches", ErrInvalidRecord)
	case h.Transactional() && !h.Idempotent():
		return nil, nil, fmt.Errorf("%w: transactional batch without a producer id", ErrInvalidRecord)
	}
	return [][]byte{blob[:n:n]}, []batchHeader{h}, nil
}

// setBaseOffset rewrites the batch's base offset (bytes 0..8). The CRC does
// not cover it, so the batch stays valid.
func setBaseOffset(b []byte, off Offset) {
	binary.BigEndian.PutUint64(b, uint64(off))
}

// setLogAppendTime stamps a batch for a LogAppendTime topic: the max
// timestamp becomes now and the timestamp-type attribute bit is set. Both
// are under the CRC, so it is recomputed.
func setLogAppendTime(b []byte, now int64) {
	be := binary.BigEndian
	be.PutUint64(b[maxTSOff:], uint64(now))
	be.PutUint16(b[attrsOff:], be.Uint16(b[attrsOff:])|logAppendTimeBit)
	be.PutUint32(b[crcOff:], crc32.Checksum(b[attrsOff:], castagnoli))
}

// validateStored checks one stored entry before it is served (read flow
// step 5): it must be exactly one batch (magic 2, its length the entry's
// size, a sound header) whose base offset and record count match the
// index. Anything else fails closed.
//
// It does not recompute the batch CRC32C nor walk the records: Produce
// checked both before the entry was written (parseBatch), and what is
// served is provably those bytes: a disk read verifies the storage frame's
// CRC32C, which covers every payload byte, and a tail-cache read serves the
// very slice Produce validated. Checking again cost a second CRC pass over
// every served byte plus a walk over every record, on the hottest path.
// validateViewed is validateStored for an entry of a compacted view (W2):
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
	return validateStored(e)
}

func validateStored(e storage.Entry) error {
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
	if err := h.checkStored(); err != nil {
		return err
	}
	if span := int64(h.LastOffsetDelta) + 1; h.BaseOffset != e.Offset || span != int64(e.Records) {
		return fmt.Errorf("%w: batch [%d,+%d) stored as entry [%d,+%d)", ErrCorruptBatch, h.BaseOffset, span, e.Offset, e.Records)
	}
	return nil
}
