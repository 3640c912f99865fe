package fetchwire

// Fetch responses are written without copying their record batches. The
// handler puts a 16-byte marker where each partition's records go and keeps
// the batches (slices of the tail cache or of one file read) aside; the
// connection writer encodes the response with kmsg as usual, then splits
// the encoding at the markers and writes the pieces and the batches with
// one writev (net.Buffers), fixing each records length prefix and the
// frame size. A 1 MiB fetch thus costs a few hundred bytes of encoding
// instead of two 1 MiB copies (concatenation, then the response buffer).
//
// The reads are leased (storage "Leased reads"): a batch read from a
// segment file is read and CRC-checked as always, into a pooled buffer
// that the writer gives back once the response is written or dropped, so
// a fetch allocates nothing per byte it serves. With fetch.sendfile.enable
// on a plaintext TCP connection the lease also keeps the ledger files
// pinned until then, and batches of at least sendfile.MinFileBytes go
// from the file to the socket with sendfile (package kafka/sendfile)
// instead of being written from the buffer; TLS connections always write
// the checked bytes themselves.
//
// A ShareFetch is answered the same way (kafka/share wire.go): its
// acquisitions read into a lease without pins, so its batches are always
// written from the checked buffers, and each partition's Records is a
// marker (MarkRead); every ShareFetch version is flexible.
//
// The marker is a per-process random 12-byte prefix plus a 4-byte index;
// the encoding around it holds only names, numbers and error messages, so
// the prefix cannot occur there by chance (2^-96).

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"

	"github.com/kgateway/kgateway/kafka/sendfile"
	"github.com/kgateway/kgateway/resolver"
)

const markerLen = 16

// markerPrefix begins every marker of this process.
var markerPrefix = func() []byte {
	b := make([]byte, markerLen-4)
	_, _ = rand.Read(b)
	return b
}()

// Batches holds one fetch response's record batches, by marker index,
// and where they lie in files (srcs, for a leased read). The zero value
// holds unleased batches.
type Batches struct {
	list  [][][]byte
	srcs  [][]resolver.FileSpan
	sizes []int
	// lease holds the buffers (and, for sendfile, the pins) of the
	// response's reads; nil for a response built without a connection.
	lease *resolver.Lease
}

// New is a response's batch holder over lease, which holds its reads'
// buffers (and, for sendfile, their pins); nil for none.
func New(lease *resolver.Lease) *Batches { return &Batches{lease: lease} }

// Lease is what the response's reads are leased to (nil: none).
func (w *Batches) Lease() *resolver.Lease { return w.lease }

// Release frees what the response's reads hold (after it is written, or
// once it never will be).
func (w *Batches) Release() {
	if w != nil {
		w.lease.Release()
	}
}

// LeaseOf is the lease of w when it is a *Batches (a ShareFetch's reads,
// kafka/share Wire), nil otherwise.
func LeaseOf(w any) *resolver.Lease {
	if b, ok := w.(*Batches); ok && b != nil {
		return b.lease
	}
	return nil
}

// MarkRead is Mark for batches written from their buffers (a lease
// without pins; kafka/share Wire).
func (w *Batches) MarkRead(batches [][]byte, size int) []byte {
	return w.Mark(batches, nil, size)
}

// Mark keeps batches (and where they lie in files, srcs, nil for memory)
// aside and returns the marker standing for them.
func (w *Batches) Mark(batches [][]byte, srcs []resolver.FileSpan, size int) []byte {
	m := make([]byte, markerLen)
	copy(m, markerPrefix)
	binary.BigEndian.PutUint32(m[markerLen-4:], uint32(len(w.list)))
	w.list = append(w.list, batches)
	w.srcs = append(w.srcs, srcs)
	w.sizes = append(w.sizes, size)
	return m
}

// BatchesOf returns the batches a partition's RecordBatches marker stands
// for; ok is false when it is not a marker of w.
func (w *Batches) BatchesOf(rb []byte) (batches [][]byte, size int, ok bool) {
	id, ok := w.markerID(rb)
	if !ok {
		return nil, 0, false
	}
	return w.list[id], w.sizes[id], true
}

// markerID is the index rb is the marker of; ok is false when it is not a
// marker of w (or w is nil).
func (w *Batches) markerID(rb []byte) (int, bool) {
	if w == nil || len(rb) != markerLen || !bytes.Equal(rb[:markerLen-4], markerPrefix) {
		return 0, false
	}
	id := int(binary.BigEndian.Uint32(rb[markerLen-4:]))
	return id, id < len(w.list)
}

// Segments splits enc, a framed fetch response (size first) whose record
// batches are markers of w, at the markers: it returns the pieces to
// write in order (a batch read from a file names its range there), with
// each records length prefix fixed to the batches' size, and their total
// size, which it also writes into enc's frame size. flexible is the
// response's encoding (v12+).
func (w *Batches) Segments(enc []byte, flexible bool) ([]sendfile.Piece, int) {
	out := make([]sendfile.Piece, 0, 2+3*len(w.list))
	prefixes := make([]byte, 0, binary.MaxVarintLen32*len(w.list))
	last := 0
	for pos := 0; ; {
		i := bytes.Index(enc[pos:], markerPrefix)
		if i < 0 {
			break
		}
		m := pos + i
		pos = m + 1
		id, ok := w.markerID(enc[m:min(m+markerLen, len(enc))])
		plen := 4
		if flexible {
			plen = 1
		}
		if !ok || m-plen < last || !markerLengthAt(enc[m-plen:m], flexible) {
			continue
		}
		batches, srcs, size := w.list[id], w.srcs[id], w.sizes[id]
		out = append(out, sendfile.Piece{Bytes: enc[last : m-plen]})
		start := len(prefixes)
		if flexible {
			prefixes = binary.AppendUvarint(prefixes, uint64(size)+1)
		} else {
			prefixes = binary.BigEndian.AppendUint32(prefixes, uint32(size))
		}
		out = append(out, sendfile.Piece{Bytes: prefixes[start:len(prefixes):len(prefixes)]})
		for i, b := range batches {
			p := sendfile.Piece{Bytes: b}
			if srcs != nil {
				p.File, p.Off = srcs[i].File, srcs[i].Off
			}
			out = append(out, p)
		}
		last = m + markerLen
		pos = last
	}
	out = append(out, sendfile.Piece{Bytes: enc[last:]})
	total := 0
	for _, p := range out {
		total += len(p.Bytes)
	}
	binary.BigEndian.PutUint32(enc, uint32(total-4))
	return out, total
}

// markerLengthAt reports whether b is the encoded length of a marker:
// int32 16, or uvarint 17 (compact bytes: length + 1) when flexible.
func markerLengthAt(b []byte, flexible bool) bool {
	if flexible {
		return len(b) == 1 && b[0] == markerLen+1
	}
	return len(b) == 4 && binary.BigEndian.Uint32(b) == markerLen
}
