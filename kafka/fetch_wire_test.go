package kafka

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/kgateway/kgateway/kafka/connection"
	"github.com/kgateway/kgateway/kafka/fetchwire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A response written in segments (batches by reference) decodes to the
// same response as one with the batches copied in, at every version,
// flexible or not, with empty, single- and multi-batch partitions.
func TestFetchWireSegments(t *testing.T) {
	a, b, c := bytes.Repeat([]byte{1}, 300), bytes.Repeat([]byte{2}, 70), bytes.Repeat([]byte{3}, 5)
	for v := int16(4); v <= 13; v++ {
		wire := &fetchwire.Batches{}
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(v)
		want := kmsg.NewPtrFetchResponse()
		want.SetVersion(v)
		for ti, parts := range [][][][]byte{{{a}, nil, {b, c}}, {{c}}} {
			rt, wt := kmsg.NewFetchResponseTopic(), kmsg.NewFetchResponseTopic()
			rt.Topic, wt.Topic = "t"+string(rune('a'+ti)), "t"+string(rune('a'+ti))
			for pi, batches := range parts {
				rp, wp := kmsg.NewFetchResponseTopicPartition(), kmsg.NewFetchResponseTopicPartition()
				rp.Partition, wp.Partition = int32(pi), int32(pi)
				rp.RecordBatches, wp.RecordBatches = []byte{}, []byte{}
				if len(batches) > 0 {
					rp.RecordBatches = wire.Mark(batches, nil, len(bytes.Join(batches, nil)))
					wp.RecordBatches = bytes.Join(batches, nil)
				}
				rt.Partitions, wt.Partitions = append(rt.Partitions, rp), append(wt.Partitions, wp)
			}
			resp.Topics, want.Topics = append(resp.Topics, rt), append(want.Topics, wt)
		}
		sl := &connection.Slot{Key: 1, Version: v, CorrID: 7, Resp: &batchResponse{FetchResponse: resp, wire: wire}}
		_, out, n := sl.Resp.(*batchResponse).appendSegments(nil, sl)
		var got []byte
		for _, p := range out {
			got = append(got, p.Bytes...)
		}
		if len(got) != n || int(binary.BigEndian.Uint32(got)) != n-4 {
			t.Fatalf("v%d: %d bytes, total %d, frame says %d", v, len(got), n, binary.BigEndian.Uint32(got))
		}
		wantFrame := appendResponse(nil, &connection.Slot{Key: 1, Version: v, CorrID: 7, Resp: want})
		if !bytes.Equal(got, wantFrame) {
			t.Fatalf("v%d: segmented frame differs from the copied one", v)
		}
		perTopic, ok := fetchRecordBytes(sl.Resp)
		if !ok || perTopic["ta"] != 375 || perTopic["tb"] != 5 {
			t.Fatalf("v%d: record bytes %v", v, perTopic)
		}
	}
}
