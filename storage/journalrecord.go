package storage

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/kgateway/kgateway/storage/fsys"
)

// A journal record (journal.go) repeats every frame of its group. Its
// bytes are not gathered into one buffer, nor checksummed again, where
// that would be a pass over each payload: the record's headers and small
// frames are built in journal.buf, each large frame's payload is written
// from where the entry already is (one pwritev for the record), and the
// record's CRC takes each large frame's CRC, which its frame header holds
// (frame CRC of bytes [8:) of the frame, computed at Write without
// reading the batch again: frame.go), concatenated on (crc.go). So a
// journaled byte is copied once more, into the journal file's page
// cache, and never read by the CPU besides. The record's bytes on disk
// are as before; Open checks their CRC as before.

// journalInlineMax is the largest payload copied into the record's
// buffer and checksummed there: up to it a copy and a CRC cost about
// what concatenating a CRC does (~0.5 µs, a copy and CRC of ~6 KiB of
// cached bytes) and spare the write a separate piece.
const journalInlineMax = 8 << 10

// journalMaxPieces bounds the buffers of one vector write (IOV_MAX is
// 1024 on Linux).
const journalMaxPieces = 512

// recordPiece is a large frame's payload in a record: it goes after the
// first at bytes of the record's buffer.
type recordPiece struct {
	at      int
	payload []byte
}

// buildRecord lays out the record of the group's live entries: j.buf
// holds its header and every frame's reference and header, and the
// payloads of small frames; pieces says where each large payload goes.
// It returns the record's buffers in order and its length; its header
// holds the length and the CRC of its bytes [8:).
func (j *journal) buildRecord(group []*Pending, failed map[*logState]error) (bufs [][]byte, n int64) {
	b := append(j.buf[:0], make([]byte, journalHdrLen)...)
	binary.BigEndian.PutUint64(b[8:], j.epoch)
	pieces := j.pieces[:0]
	crc := crc32.Update(0, castagnoli, b[8:journalHdrLen])
	done := journalHdrLen // bytes of b already in crc
	n = journalHdrLen
	for _, p := range group {
		if failed[p.log] != nil {
			continue
		}
		h := p.hdr
		b = binary.BigEndian.AppendUint64(b, uint64(p.log.id))
		b = binary.BigEndian.AppendUint64(b, uint64(h.Ledger))
		b = binary.BigEndian.AppendUint64(b, uint64(h.Pos))
		b = binary.BigEndian.AppendUint32(b, uint32(frameHeaderLen+len(p.payload)))
		b = append(b, p.frame[:]...)
		n += journalFrameHdr + frameHeaderLen + int64(len(p.payload))
		if len(p.payload) <= journalInlineMax {
			b = append(b, p.payload...)
			continue
		}
		// The frame's CRC covers its bytes [8:): its header's last 20
		// bytes and the payload.
		crc = crc32.Update(crc, castagnoli, b[done:len(b)-(frameHeaderLen-8)])
		crc = crcConcat(crc, binary.BigEndian.Uint32(p.frame[4:]), int64(frameHeaderLen-8+len(p.payload)))
		done = len(b)
		pieces = append(pieces, recordPiece{at: len(b), payload: p.payload})
	}
	crc = crc32.Update(crc, castagnoli, b[done:])
	binary.BigEndian.PutUint32(b[0:], uint32(n-8))
	binary.BigEndian.PutUint32(b[4:], crc)
	j.buf, j.pieces = b, pieces
	bufs = j.bufs[:0]
	from := 0
	for _, pc := range pieces {
		bufs = append(bufs, b[from:pc.at], pc.payload)
		from = pc.at
	}
	if from < len(b) || len(bufs) == 0 {
		bufs = append(bufs, b[from:])
	}
	j.bufs = bufs
	return bufs, n
}

// releaseRecord drops the record's references to payloads, which the
// store lets go once their entries are answered.
func (j *journal) releaseRecord() {
	clear(j.pieces)
	clear(j.bufs)
}

// writeRecord writes bufs back to back at off: in vector writes of at
// most journalMaxPieces buffers where f has them, else one WriteAt each.
func writeRecord(f File, bufs [][]byte, off int64) error {
	vw, ok := f.(fsys.VectorWriter)
	for len(bufs) > 0 {
		k := 1
		if ok {
			k = min(len(bufs), journalMaxPieces)
		}
		var n int
		var err error
		if ok {
			n, err = vw.WriteAtv(bufs[:k], off)
		} else {
			n, err = f.WriteAt(bufs[0], off)
		}
		if err != nil {
			return err
		}
		off += int64(n)
		bufs = bufs[k:]
	}
	return nil
}
