package recordbatch

import (
	"encoding/binary"
	"fmt"

	"github.com/kgateway/kgateway/crc32c"
)

// Transaction markers (the control batch format): Kafka's control record batch. Magic 2,
// attributes transactional|control, uncompressed, one record whose key is
// version int16 0 and type int16 (0 ABORT, 1 COMMIT) and whose value is
// version int16 0 and the coordinator epoch int32; producer id and epoch
// set, base sequence -1 (EndTransactionMarker in Kafka).

const (
	markerAbort  = 0
	markerCommit = 1
)

// Marker is a decoded transaction marker.
type Marker struct {
	Commit           bool
	CoordinatorEpoch int32
}

// EncodeMarker builds the control batch for (pid, epoch) at timestamp ts.
func EncodeMarker(pid int64, epoch int16, commit bool, coordinatorEpoch int32, ts int64) []byte {
	be := binary.BigEndian
	typ := uint16(markerAbort)
	if commit {
		typ = markerCommit
	}
	var body []byte
	body = append(body, 0)              // record attributes
	body = binary.AppendVarint(body, 0) // timestamp delta
	body = binary.AppendVarint(body, 0) // offset delta
	body = binary.AppendVarint(body, 4) // key length
	body = be.AppendUint16(body, 0)     // key version
	body = be.AppendUint16(body, typ)   // key type
	body = binary.AppendVarint(body, 6) // value length
	body = be.AppendUint16(body, 0)     // value version
	body = be.AppendUint32(body, uint32(coordinatorEpoch))
	body = binary.AppendVarint(body, 0) // no headers
	rec := binary.AppendVarint(nil, int64(len(body)))
	rec = append(rec, body...)

	b := make([]byte, HeaderLen, HeaderLen+len(rec))
	be.PutUint32(b[LengthOff:], uint32(HeaderLen-LenPrefix+len(rec)))
	b[MagicOff] = 2
	be.PutUint16(b[AttrsOff:], TransactionalBit|ControlBit)
	be.PutUint32(b[LastDeltaOff:], 0)
	be.PutUint64(b[BaseTSOff:], uint64(ts))
	be.PutUint64(b[MaxTSOff:], uint64(ts))
	be.PutUint64(b[ProducerIDOff:], uint64(pid))
	be.PutUint16(b[EpochOff:], uint16(epoch))
	be.PutUint32(b[BaseSeqOff:], 0xffffffff) // -1: markers carry no sequence
	be.PutUint32(b[CountOff:], 1)
	b = append(b, rec...)
	be.PutUint32(b[CRCOff:], crc32c.Checksum(b[AttrsOff:]))
	return b
}

// DecodeMarker reads the marker of a stored control batch.
func DecodeMarker(b []byte) (Marker, error) {
	be := binary.BigEndian
	if len(b) <= HeaderLen {
		return Marker{}, fmt.Errorf("%w: control batch of %d bytes", ErrCorruptBatch, len(b))
	}
	rec := b[HeaderLen:]
	// length, attributes, timestamp delta, offset delta, then key and value.
	for i := range 3 {
		_, k := binary.Varint(rec)
		if k <= 0 || len(rec) < k+1 {
			return Marker{}, fmt.Errorf("%w: short control record", ErrCorruptBatch)
		}
		rec = rec[k:]
		if i == 0 {
			rec = rec[1:] // record attributes
		}
	}
	key, rest, err := varBytes(rec)
	if err != nil || len(key) < 4 {
		return Marker{}, fmt.Errorf("%w: control record key", ErrCorruptBatch)
	}
	val, _, err := varBytes(rest)
	if err != nil {
		return Marker{}, fmt.Errorf("%w: control record value", ErrCorruptBatch)
	}
	m := Marker{Commit: be.Uint16(key[2:]) == markerCommit, CoordinatorEpoch: -1}
	if t := be.Uint16(key[2:]); t != markerAbort && t != markerCommit {
		return Marker{}, fmt.Errorf("%w: control record type %d", ErrCorruptBatch, t)
	}
	if len(val) >= 6 {
		m.CoordinatorEpoch = int32(be.Uint32(val[2:]))
	}
	return m, nil
}

// varBytes reads a varint-length-prefixed byte string.
func varBytes(b []byte) ([]byte, []byte, error) {
	l, k := binary.Varint(b)
	if k <= 0 || l < 0 || int64(len(b)-k) < l {
		return nil, nil, fmt.Errorf("bad length")
	}
	return b[k : k+int(l)], b[k+int(l):], nil
}
