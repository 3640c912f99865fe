package tier

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/kgateway/kgateway/storage"
)

// Object layout (doc.go "Object format"):
//
//	[0, F)       the ledger's frames, byte for byte as in its segment file
//	[F, F+I)     the object-level index: one 32-byte record per entry
//	             (offset, records, max time, frame position, payload size)
//	[F+I, F+I+44) the footer: magic, format version, entries, F, I, first
//	             offset, CRC32C of the footer's first 40 bytes
const (
	indexRecLen   = 32
	footerLen     = 44
	formatVersion = 1
)

var (
	footerMagic = [8]byte{'K', 'G', 'W', 'T', 'I', 'E', 'R', 0}
	castagnoli  = crc32.MakeTable(crc32.Castagnoli)
)

// indexRec is one entry of an object-level index.
type indexRec struct {
	Offset  storage.Offset
	Records int32
	MaxTime int64
	Pos     int64
	Size    int32
}

func appendIndexRec(b []byte, r indexRec) []byte {
	be := binary.BigEndian
	b = be.AppendUint64(b, uint64(r.Offset))
	b = be.AppendUint32(b, uint32(r.Records))
	b = be.AppendUint64(b, uint64(r.MaxTime))
	b = be.AppendUint64(b, uint64(r.Pos))
	return be.AppendUint32(b, uint32(r.Size))
}

// footer is the object's last footerLen bytes.
type footer struct {
	Version     uint32
	Entries     uint32
	FramesBytes int64
	IndexBytes  int64
	FirstOffset storage.Offset
}

func (f footer) encode() []byte {
	be := binary.BigEndian
	b := append([]byte(nil), footerMagic[:]...)
	b = be.AppendUint32(b, f.Version)
	b = be.AppendUint32(b, f.Entries)
	b = be.AppendUint64(b, uint64(f.FramesBytes))
	b = be.AppendUint64(b, uint64(f.IndexBytes))
	b = be.AppendUint64(b, uint64(f.FirstOffset))
	return be.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decodeFooter checks an object's footer against the object's size: an
// unknown format version, a bad CRC, or a size that is not exactly frames
// + index + footer (trailing or missing bytes) fails closed (B7).
func decodeFooter(b []byte, size int64) (footer, error) {
	be := binary.BigEndian
	if len(b) != footerLen || [8]byte(b[:8]) != footerMagic {
		return footer{}, fmt.Errorf("%w: object footer magic", storage.ErrCorrupt)
	}
	if crc32.Checksum(b[:40], castagnoli) != be.Uint32(b[40:]) {
		return footer{}, fmt.Errorf("%w: object footer crc", storage.ErrCorrupt)
	}
	f := footer{
		Version: be.Uint32(b[8:]), Entries: be.Uint32(b[12:]),
		FramesBytes: int64(be.Uint64(b[16:])), IndexBytes: int64(be.Uint64(b[24:])),
		FirstOffset: storage.Offset(be.Uint64(b[32:])),
	}
	switch {
	case f.Version != formatVersion:
		return footer{}, fmt.Errorf("%w: object format version %d", storage.ErrCorrupt, f.Version)
	case f.IndexBytes != int64(f.Entries)*indexRecLen || f.FramesBytes < 0:
		return footer{}, fmt.Errorf("%w: object index of %d bytes for %d entries", storage.ErrCorrupt, f.IndexBytes, f.Entries)
	case f.FramesBytes+f.IndexBytes+footerLen != size:
		return footer{}, fmt.Errorf("%w: object of %d bytes, footer says %d", storage.ErrCorrupt, size, f.FramesBytes+f.IndexBytes+footerLen)
	}
	return f, nil
}

// decodeIndex parses and checks an object-level index: entries lie back
// to back from position 0 to exactly the end of the frames region, with
// offsets increasing (a rewritten ledger may leave gaps between them).
func decodeIndex(b []byte, f footer) ([]indexRec, error) {
	if int64(len(b)) != f.IndexBytes {
		return nil, fmt.Errorf("%w: object index of %d bytes, footer says %d", storage.ErrCorrupt, len(b), f.IndexBytes)
	}
	be := binary.BigEndian
	out := make([]indexRec, f.Entries)
	var pos int64
	next := f.FirstOffset
	for i := range out {
		p := b[i*indexRecLen:]
		r := indexRec{
			Offset: storage.Offset(be.Uint64(p)), Records: int32(be.Uint32(p[8:])),
			MaxTime: int64(be.Uint64(p[12:])), Pos: int64(be.Uint64(p[20:])), Size: int32(be.Uint32(p[28:])),
		}
		if r.Pos != pos || r.Size < 0 || r.Records < 1 || r.Offset < next {
			return nil, fmt.Errorf("%w: object index entry %d out of sequence", storage.ErrCorrupt, i)
		}
		pos += storage.FrameHeaderLen + int64(r.Size)
		next = r.Offset + storage.Offset(r.Records)
		out[i] = r
	}
	if pos != f.FramesBytes {
		return nil, fmt.Errorf("%w: object index covers %d bytes of %d", storage.ErrCorrupt, pos, f.FramesBytes)
	}
	return out, nil
}

// checkEntry checks a read's index header against the object's index
// entry for it (the header's entry id is its place in the ledger).
func checkEntry(idx []indexRec, h storage.EntryHeader) (indexRec, error) {
	if uint64(h.Entry) >= uint64(len(idx)) {
		return indexRec{}, fmt.Errorf("%w: entry %v past the object's %d", storage.ErrCorrupt, h.Entry, len(idx))
	}
	r := idx[h.Entry]
	if r.Offset != h.Offset || r.Records != h.Records || r.Pos != h.Pos || r.Size != h.Size {
		return indexRec{}, fmt.Errorf("%w: object index entry %v disagrees with the ledger index", storage.ErrCorrupt, h.Entry)
	}
	return r, nil
}
