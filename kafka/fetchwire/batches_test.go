package fetchwire

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A response written in segments (batches by reference) is the response
// with the batches copied in, byte for byte, at every version, flexible or
// not, with empty, single- and multi-batch partitions; the frame size
// counts the batches.
func TestSegments(t *testing.T) {
	a, b, c := bytes.Repeat([]byte{1}, 300), bytes.Repeat([]byte{2}, 70), bytes.Repeat([]byte{3}, 5)
	for v := int16(4); v <= 13; v++ {
		w := New(nil)
		resp, want := kmsg.NewPtrFetchResponse(), kmsg.NewPtrFetchResponse()
		resp.SetVersion(v)
		want.SetVersion(v)
		for ti, parts := range [][][][]byte{{{a}, nil, {b, c}}, {{c}}} {
			rt, wt := kmsg.NewFetchResponseTopic(), kmsg.NewFetchResponseTopic()
			rt.Topic, wt.Topic = "t"+string(rune('a'+ti)), "t"+string(rune('a'+ti))
			for pi, batches := range parts {
				rp, wp := kmsg.NewFetchResponseTopicPartition(), kmsg.NewFetchResponseTopicPartition()
				rp.Partition, wp.Partition = int32(pi), int32(pi)
				rp.RecordBatches, wp.RecordBatches = []byte{}, []byte{}
				if len(batches) > 0 {
					n := len(bytes.Join(batches, nil))
					rp.RecordBatches = w.Mark(batches, nil, n)
					wp.RecordBatches = bytes.Join(batches, nil)
					if got, size, ok := w.BatchesOf(rp.RecordBatches); !ok || size != n || len(got) != len(batches) {
						t.Fatalf("v%d: BatchesOf(marker) = %d batches, %d bytes, %v", v, len(got), size, ok)
					}
				}
				rt.Partitions, wt.Partitions = append(rt.Partitions, rp), append(wt.Partitions, wp)
			}
			resp.Topics, want.Topics = append(resp.Topics, rt), append(want.Topics, wt)
		}
		enc := resp.AppendTo([]byte{0, 0, 0, 0})
		pieces, n := w.Segments(enc, v >= 12)
		var got []byte
		for _, p := range pieces {
			got = append(got, p.Bytes...)
		}
		wantFrame := want.AppendTo([]byte{0, 0, 0, 0})
		binary.BigEndian.PutUint32(wantFrame, uint32(len(wantFrame)-4))
		if len(got) != n || !bytes.Equal(got, wantFrame) {
			t.Fatalf("v%d: segmented frame (%d bytes, total %d) differs from the copied one (%d)", v, len(got), n, len(wantFrame))
		}
	}
	if _, _, ok := New(nil).BatchesOf(bytes.Repeat([]byte{0}, markerLen)); ok {
		t.Fatal("sixteen zero bytes taken for a marker")
	}
}
