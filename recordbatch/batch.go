package recordbatch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/kgateway/kgateway/crc32c"
)

// This file is the byte-level view of a Kafka record batch
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
	HeaderLen     = 61 // bytes before the first record
	LengthOff     = 8
	LenPrefix     = 12 // baseOffset + batchLength: not counted in batchLength
	MagicOff      = 16
	CRCOff        = 17
	AttrsOff      = 21
	LastDeltaOff  = 23
	BaseTSOff     = 27
	MaxTSOff      = 35
	ProducerIDOff = 43
	EpochOff      = 51
	BaseSeqOff    = 53
	CountOff      = 57

	CodecMask        = 0x07
	LogAppendTimeBit = 0x08
	TransactionalBit = 0x10
	ControlBit       = 0x20
)

var Castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header is the part of a record batch header the resolver uses.
type Header struct {
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
func (h Header) Idempotent() bool { return h.ProducerID >= 0 }

// Transactional reports the transactional attribute bit.
func (h Header) Transactional() bool { return h.Attributes&TransactionalBit != 0 }

// Control reports the control attribute bit: a transaction marker (the control batch format).
func (h Header) Control() bool { return h.Attributes&ControlBit != 0 }

// BatchTransactional reports whether b starts with a record batch (magic 2)
// whose transactional attribute bit is set. The wire layer refuses such a
// batch in a produce request that carries no transactional id, as Kafka
// does, before anything reaches the resolver; it reads the first batch
// only, as Kafka does (Produce takes one batch per partition).
func BatchTransactional(b []byte) bool {
	if len(b) < AttrsOff+2 || b[MagicOff] != 2 {
		return false
	}
	return int16(binary.BigEndian.Uint16(b[AttrsOff:]))&TransactionalBit != 0
}

// LastSequence is the sequence of the batch's last record; sequences wrap
// at MaxInt32 back to 0 as in Kafka. It counts by lastOffsetDelta, as
// Kafka does, which a cleaned batch keeps when it loses records (the latest-record rewrite).
func (h Header) LastSequence() int32 {
	return SeqAdd(h.BaseSequence, h.LastOffsetDelta)
}

// SeqAdd adds to a sequence number with Kafka's wrap-around at MaxInt32.
func SeqAdd(seq, n int32) int32 {
	s := int64(seq) + int64(n)
	if s > 1<<31-1 {
		s -= 1 << 31
	}
	return int32(s)
}

// Parse validates the record batch at the start of b and returns its
// header and total size. It checks everything that can be checked without
// reading the records: magic, lengths, CRC32C over attributes..end, record
// count against lastOffsetDelta, codec. ScanRecords checks the records.
// Errors wrap ErrCorruptBatch, ErrInvalidRecord or ErrUnsupportedMagic.
func Parse(b []byte) (Header, int, error) {
	if len(b) > MagicOff && b[MagicOff] != 2 {
		if m := int8(b[MagicOff]); m == 0 || m == 1 {
			return Header{}, 0, fmt.Errorf("%w: magic %d", ErrUnsupportedMagic, m)
		}
		return Header{}, 0, fmt.Errorf("%w: magic %d", ErrCorruptBatch, int8(b[MagicOff]))
	}
	if len(b) < HeaderLen {
		return Header{}, 0, fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorruptBatch, len(b))
	}
	blen := int32(binary.BigEndian.Uint32(b[LengthOff:]))
	if blen < HeaderLen-LenPrefix || int64(blen) > int64(len(b)-LenPrefix) {
		return Header{}, 0, fmt.Errorf("%w: batch length %d with %d bytes", ErrCorruptBatch, blen, len(b))
	}
	size := int(blen) + LenPrefix
	b = b[:size]
	if want, got := binary.BigEndian.Uint32(b[CRCOff:]), crc32c.Checksum(b[AttrsOff:]); want != got {
		return Header{}, 0, fmt.Errorf("%w: crc %08x, computed %08x", ErrCorruptBatch, want, got)
	}
	h := DecodeHeader(b)
	if err := h.Check(); err != nil {
		return Header{}, 0, err
	}
	return h, size, nil
}

func DecodeHeader(b []byte) Header {
	be := binary.BigEndian
	return Header{
		BaseOffset:      Offset(be.Uint64(b)),
		Attributes:      int16(be.Uint16(b[AttrsOff:])),
		LastOffsetDelta: int32(be.Uint32(b[LastDeltaOff:])),
		BaseTimestamp:   int64(be.Uint64(b[BaseTSOff:])),
		MaxTimestamp:    int64(be.Uint64(b[MaxTSOff:])),
		ProducerID:      int64(be.Uint64(b[ProducerIDOff:])),
		ProducerEpoch:   int16(be.Uint16(b[EpochOff:])),
		BaseSequence:    int32(be.Uint32(b[BaseSeqOff:])),
		Records:         int32(be.Uint32(b[CountOff:])),
	}
}

// check validates the header fields that do not depend on the payload.
// The codes are Kafka's: LogValidator refuses inconsistent counts and
// sequences as invalid records.
func (h Header) Check() error {
	switch {
	case h.Records < 1:
		return fmt.Errorf("%w: record count %d", ErrInvalidRecord, h.Records)
	case int64(h.Records) != int64(h.LastOffsetDelta)+1:
		return fmt.Errorf("%w: record count %d with last offset delta %d", ErrInvalidRecord, h.Records, h.LastOffsetDelta)
	case Codec(h.Attributes&CodecMask) > CodecZstd:
		return fmt.Errorf("%w: unknown compression codec %d", ErrCorruptBatch, h.Attributes&CodecMask)
	case h.ProducerID < -1:
		return fmt.Errorf("%w: producer id %d", ErrInvalidRecord, h.ProducerID)
	case h.Idempotent() && (h.ProducerEpoch < 0 || (h.BaseSequence < 0 && !h.Control())):
		// A marker carries no sequence (base sequence -1), as in Kafka.
		return fmt.Errorf("%w: producer %d with epoch %d and sequence %d", ErrInvalidRecord, h.ProducerID, h.ProducerEpoch, h.BaseSequence)
	}
	return nil
}

// Split validates the header of a produce records blob, which holds
// exactly one batch (Produce v3+, as Kafka's ProduceRequest.validateRecords
// requires), and returns it with its header. The slices keep appendLocked
// general; they hold one element. A second whole batch is INVALID_RECORD,
// as in Kafka; bytes after the batch that are no batch are corrupt.
func Split(blob []byte) ([][]byte, []Header, error) {
	if len(blob) == 0 {
		return nil, nil, fmt.Errorf("%w: no record batch", ErrInvalidRecord)
	}
	h, n, err := Parse(blob)
	if err != nil {
		return nil, nil, err
	}
	if rest := blob[n:]; len(rest) > 0 {
		if _, _, err := Parse(rest); err == nil {
			return nil, nil, fmt.Errorf("%w: more than one record batch for a partition", ErrInvalidRecord)
		}
		return nil, nil, fmt.Errorf("%w: %d bytes after the record batch", ErrCorruptBatch, len(rest))
	}
	switch {
	case h.Control():
		// Only the resolver writes control batches (markers, control batches by WriteTxnMarker only), as in
		// Kafka: "clients are not allowed to write control records".
		return nil, nil, fmt.Errorf("%w: clients may not write control batches", ErrInvalidRecord)
	case h.Transactional() && !h.Idempotent():
		return nil, nil, fmt.Errorf("%w: transactional batch without a producer id", ErrInvalidRecord)
	}
	return [][]byte{blob[:n:n]}, []Header{h}, nil
}

// SetBaseOffset rewrites the batch's base offset (bytes 0..8). The CRC does
// not cover it, so the batch stays valid.
func SetBaseOffset(b []byte, off Offset) {
	binary.BigEndian.PutUint64(b, uint64(off))
}

// SetLogAppendTime stamps a batch for a LogAppendTime topic: the max
// timestamp becomes now and the timestamp-type attribute bit is set. Both
// are under the CRC, so it is recomputed.
func SetLogAppendTime(b []byte, now int64) {
	be := binary.BigEndian
	be.PutUint64(b[MaxTSOff:], uint64(now))
	be.PutUint16(b[AttrsOff:], be.Uint16(b[AttrsOff:])|LogAppendTimeBit)
	be.PutUint32(b[CRCOff:], crc32c.Checksum(b[AttrsOff:]))
}

// SetCreateTime clears b's LogAppendTime bit, keeping its max timestamp,
// and sets its CRC: a producer's batch that set the bit, stored on a
// CreateTime topic.
func SetCreateTime(b []byte) {
	be := binary.BigEndian
	be.PutUint16(b[AttrsOff:], be.Uint16(b[AttrsOff:])&^LogAppendTimeBit)
	be.PutUint32(b[CRCOff:], crc32c.Checksum(b[AttrsOff:]))
}

// Errors of the batch format. kafka/ maps them to Kafka's error codes
// through the resolver, which re-exports them.
var (
	ErrCorruptBatch     = errors.New("resolver: corrupt record batch")
	ErrUnsupportedMagic = errors.New("resolver: unsupported record batch version")
	ErrInvalidRecord    = errors.New("resolver: invalid record")
)

// CheckStored is Check for a stored batch: a cleaned one (the latest-record rewrite) spans the
// offsets its lastOffsetDelta says but may hold fewer records, even none
// (a producer's last batch, kept for its sequence).
func (h Header) CheckStored() error {
	if h.Records >= 0 && int64(h.Records) <= int64(h.LastOffsetDelta)+1 && h.Records != h.LastOffsetDelta+1 {
		h.Records = h.LastOffsetDelta + 1 // judge the rest as Check does
	}
	return h.Check()
}
