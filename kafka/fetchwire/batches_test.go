package fetchwire

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/kgateway/kgateway/resolver"

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

// A ShareFetch's batches keep the file ranges their reads named
// (Located): marked with MarkRead, in any order and any selection, a
// located batch's piece names its range, and a batch from memory, or
// one no read located, is written from its buffer.
func TestMarkReadLocated(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "seg")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, b, c, d := bytes.Repeat([]byte{1}, 300), bytes.Repeat([]byte{2}, 70), bytes.Repeat([]byte{3}, 5), bytes.Repeat([]byte{4}, 9)
	w := New(nil)
	w.Located([][]byte{a, b, c}, []resolver.FileSpan{{File: f, Off: 100}, {}, {File: f, Off: 500}})
	w.Located([][]byte{d}, nil)
	resp := kmsg.NewPtrShareFetchResponse()
	rt, rp := kmsg.NewShareFetchResponseTopic(), kmsg.NewShareFetchResponseTopicPartition()
	rp.Records = w.MarkRead([][]byte{c, d, b, a}, 384)
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	pieces, _ := w.Segments(resp.AppendTo([]byte{0, 0, 0, 0}), true)
	want := map[*byte]int64{&c[0]: 500, &d[0]: -1, &b[0]: -1, &a[0]: 100} // -1: from memory
	seen := 0
	for _, p := range pieces {
		if len(p.Bytes) == 0 {
			continue
		}
		off, ok := want[&p.Bytes[0]]
		if !ok {
			continue
		}
		seen++
		switch {
		case off < 0 && p.File != nil:
			t.Errorf("batch of %d bytes: from file at %d, want from memory", len(p.Bytes), p.Off)
		case off >= 0 && (p.File != f || p.Off != off):
			t.Errorf("batch of %d bytes: file %v at %d, want the file at %d", len(p.Bytes), p.File, p.Off, off)
		}
	}
	if seen != len(want) {
		t.Fatalf("%d batch pieces, want %d", seen, len(want))
	}
}
