package kafka

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
// The marker is a per-process random 12-byte prefix plus a 4-byte index;
// the encoding around it holds only names, numbers and error messages, so
// the prefix cannot occur there by chance (2^-96).

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"

	"github.com/kgateway/kgateway/kafka/sendfile"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const markerLen = 16

// markerPrefix begins every marker of this process.
var markerPrefix = func() []byte {
	b := make([]byte, markerLen-4)
	_, _ = rand.Read(b)
	return b
}()

// wireBatches holds one fetch response's record batches, by marker index,
// and where they lie in files (srcs, for a leased read).
type wireBatches struct {
	list  [][][]byte
	srcs  [][]resolver.FileSpan
	sizes []int
	// lease holds the buffers (and, for sendfile, the pins) of the
	// response's reads; nil for a response built without a connection.
	lease *resolver.Lease
}

// newWire is a response's batch holder: its reads leased, keeping pins
// when conn sends batches with sendfile (conn.sendfile).
func newWire(conn *conn) *wireBatches {
	w := &wireBatches{}
	if conn != nil {
		w.lease = resolver.NewLease(conn.sendfile())
	}
	return w
}

// release frees what the response's reads hold (after it is written, or
// once it never will be).
func (w *wireBatches) release() {
	if w != nil {
		w.lease.Release()
	}
}

// mark keeps batches (and where they lie in files, srcs, nil for memory)
// aside and returns the marker standing for them.
func (w *wireBatches) mark(batches [][]byte, srcs []resolver.FileSpan, size int) []byte {
	m := make([]byte, markerLen)
	copy(m, markerPrefix)
	binary.BigEndian.PutUint32(m[markerLen-4:], uint32(len(w.list)))
	w.list = append(w.list, batches)
	w.srcs = append(w.srcs, srcs)
	w.sizes = append(w.sizes, size)
	return m
}

// batchesOf returns the batches a partition's RecordBatches marker stands
// for; ok is false when it is not a marker of w.
func (w *wireBatches) batchesOf(rb []byte) (batches [][]byte, size int, ok bool) {
	id, ok := w.markerID(rb)
	if !ok {
		return nil, 0, false
	}
	return w.list[id], w.sizes[id], true
}

// markerID is the index rb is the marker of; ok is false when it is not a
// marker of w.
func (w *wireBatches) markerID(rb []byte) (int, bool) {
	if len(rb) != markerLen || !bytes.Equal(rb[:markerLen-4], markerPrefix) {
		return 0, false
	}
	id := int(binary.BigEndian.Uint32(rb[markerLen-4:]))
	return id, id < len(w.list)
}

// batchResponse is a FetchResponse whose record batches are markers into
// wire; the connection writer writes it with appendSegments.
type batchResponse struct {
	*kmsg.FetchResponse
	wire *wireBatches
}

// recordBytes is the record batch bytes a response partition carries.
func (br *batchResponse) recordBytes(p *kmsg.FetchResponseTopicPartition) int {
	if _, n, ok := br.wire.batchesOf(p.RecordBatches); ok {
		return n
	}
	return len(p.RecordBatches)
}

// fetchRecordBytes returns the record batch bytes per topic of a fetch
// response, markers resolved (for observers); ok is false for any other
// response.
func fetchRecordBytes(resp kmsg.Response) (perTopic map[string]int, ok bool) {
	var fr *kmsg.FetchResponse
	var br *batchResponse
	switch r := resp.(type) {
	case *batchResponse:
		fr, br = r.FetchResponse, r
	case *kmsg.FetchResponse:
		fr = r
	default:
		return nil, false
	}
	perTopic = make(map[string]int)
	for i := range fr.Topics {
		t := &fr.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			n := len(p.RecordBatches)
			if br != nil {
				n = br.recordBytes(p)
			}
			perTopic[t.Topic] += n
		}
	}
	return perTopic, true
}

// appendSegments frames the response into dst (header and every field but
// the record batches) and returns it, the pieces to write in order (a
// batch read from a file names its range there), and their total size.
func (br *batchResponse) appendSegments(dst []byte, sl *slot) ([]byte, []sendfile.Piece, int) {
	enc := appendResponse(dst, sl)
	flexible := sl.version >= 12
	out := make([]sendfile.Piece, 0, 2+3*len(br.wire.list))
	prefixes := make([]byte, 0, binary.MaxVarintLen32*len(br.wire.list))
	last := 0
	for pos := 0; ; {
		i := bytes.Index(enc[pos:], markerPrefix)
		if i < 0 {
			break
		}
		m := pos + i
		pos = m + 1
		id, ok := br.wire.markerID(enc[m:min(m+markerLen, len(enc))])
		plen := 4
		if flexible {
			plen = 1
		}
		if !ok || m-plen < last || !markerLengthAt(enc[m-plen:m], flexible) {
			continue
		}
		batches, srcs, size := br.wire.list[id], br.wire.srcs[id], br.wire.sizes[id]
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
	return enc, out, total
}

// markerLengthAt reports whether b is the encoded length of a marker:
// int32 16, or uvarint 17 (compact bytes: length + 1) when flexible.
func markerLengthAt(b []byte, flexible bool) bool {
	if flexible {
		return len(b) == 1 && b[0] == markerLen+1
	}
	return len(b) == 4 && binary.BigEndian.Uint32(b) == markerLen
}
