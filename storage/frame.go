package storage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/kgateway/kgateway/crc32c"
)

// Entry frame (doc.go "File format"):
//
//	[0:4)   length of the rest of the frame (CRC + header + payload), uint32 BE
//	[4:8)   CRC32C (Castagnoli) of bytes [8:end)
//	[8:16)  offset of the entry's first record, int64 BE
//	[16:20) records, int32 BE
//	[20:28) max timestamp (ms), int64 BE
//	[28:)   payload
const (
	frameHeaderLen = 28
	// maxPayload bounds one entry; a length beyond it in a tail scan is a
	// torn or garbage frame, not an allocation request.
	maxPayload = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// suffixCRC is a CRC32C of payload[from:] that the writer already has
// (AppendOptions.SuffixCRC); the zero value is none.
type suffixCRC struct {
	from int
	crc  uint32
}

// encodeFrameHeader fills hdr (frameHeaderLen bytes) for payload. The
// bytes a known suffix CRC covers are not read again: its CRC is
// concatenated on (crc.go).
func encodeFrameHeader(hdr []byte, off Offset, records int32, maxTime int64, payload []byte, known suffixCRC) {
	be := binary.BigEndian
	be.PutUint32(hdr[0:], uint32(frameHeaderLen-4+len(payload)))
	be.PutUint64(hdr[8:], uint64(off))
	be.PutUint32(hdr[16:], uint32(records))
	be.PutUint64(hdr[20:], uint64(maxTime))
	crc := crc32.Update(0, castagnoli, hdr[8:frameHeaderLen])
	if known.from <= 0 || known.from > len(payload) {
		crc = crc32c.Update(crc, payload)
	} else {
		crc = crc32c.Update(crc, payload[:known.from])
		crc = crcConcat(crc, known.crc, int64(len(payload)-known.from))
	}
	be.PutUint32(hdr[4:], crc)
}

// frameFields is what a frame header says about its entry.
type frameFields struct {
	Offset  Offset
	Records int32
	MaxTime int64
	Size    int // payload bytes
}

// parseFrameLen reads the payload size a frame header announces; ok is false
// for a length no writer produces.
func parseFrameLen(hdr []byte) (size int, ok bool) {
	n := int64(binary.BigEndian.Uint32(hdr[0:]))
	size64 := n - (frameHeaderLen - 4)
	if size64 < 0 || size64 > maxPayload {
		return 0, false
	}
	return int(size64), true
}

// checkFrame verifies a whole frame (header and payload) and returns its
// fields. Errors wrap ErrCorrupt.
func checkFrame(frame []byte) (frameFields, error) {
	if len(frame) < frameHeaderLen {
		return frameFields{}, fmt.Errorf("%w: short frame of %d bytes", ErrCorrupt, len(frame))
	}
	size, ok := parseFrameLen(frame)
	if !ok || frameHeaderLen+size != len(frame) {
		return frameFields{}, fmt.Errorf("%w: frame length mismatch", ErrCorrupt)
	}
	be := binary.BigEndian
	if crc32c.Checksum(frame[8:]) != be.Uint32(frame[4:]) {
		return frameFields{}, fmt.Errorf("%w: crc mismatch", ErrCorrupt)
	}
	return frameFields{
		Offset:  Offset(be.Uint64(frame[8:])),
		Records: int32(be.Uint32(frame[16:])),
		MaxTime: int64(be.Uint64(frame[20:])),
		Size:    size,
	}, nil
}
