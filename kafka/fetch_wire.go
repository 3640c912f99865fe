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
// The marker is a per-process random 12-byte prefix plus a 4-byte index;
// the encoding around it holds only names, numbers and error messages, so
// the prefix cannot occur there by chance (2^-96).

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const markerLen = 16

// markerPrefix begins every marker of this process.
var markerPrefix = func() []byte {
	b := make([]byte, markerLen-4)
	_, _ = rand.Read(b)
	return b
}()

// wireBatches holds one fetch response's record batches, by marker index.
type wireBatches struct {
	list  [][][]byte
	sizes []int
}

// mark keeps batches aside and returns the marker standing for them.
func (w *wireBatches) mark(batches [][]byte, size int) []byte {
	m := make([]byte, markerLen)
	copy(m, markerPrefix)
	binary.BigEndian.PutUint32(m[markerLen-4:], uint32(len(w.list)))
	w.list = append(w.list, batches)
	w.sizes = append(w.sizes, size)
	return m
}

// batchesOf returns the batches a partition's RecordBatches marker stands
// for; ok is false when it is not a marker of w.
func (w *wireBatches) batchesOf(rb []byte) (batches [][]byte, size int, ok bool) {
	if len(rb) != markerLen || !bytes.Equal(rb[:markerLen-4], markerPrefix) {
		return nil, 0, false
	}
	id := int(binary.BigEndian.Uint32(rb[markerLen-4:]))
	if id >= len(w.list) {
		return nil, 0, false
	}
	return w.list[id], w.sizes[id], true
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
// the record batches) and returns it, the pieces to write in order, and
// their total size.
func (br *batchResponse) appendSegments(dst []byte, sl *slot) ([]byte, net.Buffers, int) {
	enc := appendResponse(dst, sl)
	flexible := sl.version >= 12
	out := make(net.Buffers, 0, 2+3*len(br.wire.list))
	prefixes := make([]byte, 0, binary.MaxVarintLen32*len(br.wire.list))
	last := 0
	for pos := 0; ; {
		i := bytes.Index(enc[pos:], markerPrefix)
		if i < 0 {
			break
		}
		m := pos + i
		pos = m + 1
		batches, size, ok := br.wire.batchesOf(enc[m:min(m+markerLen, len(enc))])
		plen := 4
		if flexible {
			plen = 1
		}
		if !ok || m-plen < last || !markerLengthAt(enc[m-plen:m], flexible) {
			continue
		}
		out = append(out, enc[last:m-plen])
		start := len(prefixes)
		if flexible {
			prefixes = binary.AppendUvarint(prefixes, uint64(size)+1)
		} else {
			prefixes = binary.BigEndian.AppendUint32(prefixes, uint32(size))
		}
		out = append(out, prefixes[start:len(prefixes):len(prefixes)])
		out = append(out, batches...)
		last = m + markerLen
		pos = last
	}
	out = append(out, enc[last:])
	total := 0
	for _, b := range out {
		total += len(b)
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
