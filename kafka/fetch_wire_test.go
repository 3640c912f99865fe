package kafka

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"

	"github.com/kgateway/kgateway/kafka/connection"
	"github.com/kgateway/kgateway/kafka/fetchwire"
	"github.com/kgateway/kgateway/resolver"
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

// A ShareFetch response written in segments (records by reference, as
// the share handler answers) is the response with the records copied in,
// byte for byte, at every version, with empty, single- and multi-batch
// partitions (kafka/share wire.go).
func TestShareFetchWireSegments(t *testing.T) {
	a, b, c := bytes.Repeat([]byte{1}, 300), bytes.Repeat([]byte{2}, 70), bytes.Repeat([]byte{3}, 5)
	for v := int16(0); v <= 2; v++ {
		wire := fetchwire.New(nil)
		resp, want := kmsg.NewPtrShareFetchResponse(), kmsg.NewPtrShareFetchResponse()
		resp.SetVersion(v)
		want.SetVersion(v)
		for ti, parts := range [][][][]byte{{{a}, nil, {b, c}}, {{c}}} {
			rt, wt := kmsg.NewShareFetchResponseTopic(), kmsg.NewShareFetchResponseTopic()
			rt.TopicID, wt.TopicID = [16]byte{byte(ti + 1)}, [16]byte{byte(ti + 1)}
			for pi, batches := range parts {
				rp, wp := kmsg.NewShareFetchResponseTopicPartition(), kmsg.NewShareFetchResponseTopicPartition()
				rp.Partition, wp.Partition = int32(pi), int32(pi)
				rp.Records, wp.Records = []byte{}, []byte{}
				if len(batches) > 0 {
					rp.Records = wire.MarkRead(batches, len(bytes.Join(batches, nil)))
					wp.Records = bytes.Join(batches, nil)
					ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
					ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = 10, 20, 1
					rp.AcquiredRecords, wp.AcquiredRecords = append(rp.AcquiredRecords, ar), append(wp.AcquiredRecords, ar)
				}
				rt.Partitions, wt.Partitions = append(rt.Partitions, rp), append(wt.Partitions, wp)
			}
			resp.Topics, want.Topics = append(resp.Topics, rt), append(want.Topics, wt)
		}
		sl := &connection.Slot{Key: 78, Version: v, CorrID: 7, Resp: &shareResponse{resp, wire}}
		enc, out, n, ok := (&conn{}).Encode(nil, sl)
		if !ok || len(out) == 0 || len(enc) >= n {
			t.Fatalf("v%d: not written in segments (%d pieces, %d of %d bytes encoded)", v, len(out), len(enc), n)
		}
		var got []byte
		for _, p := range out {
			got = append(got, p.Bytes...)
		}
		wantFrame := appendResponse(nil, &connection.Slot{Key: 78, Version: v, CorrID: 7, Resp: want})
		if len(got) != n || !bytes.Equal(got, wantFrame) {
			t.Fatalf("v%d: segmented frame (%d bytes, total %d) differs from the copied one (%d)", v, len(got), n, len(wantFrame))
		}
	}
}

// A ShareFetch response's lease is given back once the response is
// written, and when the connection closes while it is being written
// (dropped): the writer frees every response it took.
func TestShareFetchLeaseGivenBack(t *testing.T) {
	wires := make(chan *fetchwire.Batches, 2)
	big := bytes.Repeat([]byte{7}, 32<<20) // more than the socket buffers hold
	replaceAPI(t, api{key: 78, min: 1, max: 2, handle: func(_ *Server, _ *reqCtx, req kmsg.Request) (kmsg.Response, error) {
		wire := fetchwire.New(resolver.NewLease(false))
		resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
		rt, rp := kmsg.NewShareFetchResponseTopic(), kmsg.NewShareFetchResponseTopicPartition()
		rp.Records = wire.MarkRead([][]byte{big}, len(big))
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		wires <- wire
		return &shareResponse{resp, wire}, nil
	}})
	s := startServer(t, Config{})
	req := kmsg.NewPtrShareFetchRequest()
	req.SetVersion(1)

	written := dialRaw(t, s.Addr())
	written.send(1, req)
	resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
	written.recv(resp)
	if len(resp.Topics) != 1 || !bytes.Equal(resp.Topics[0].Partitions[0].Records, big) {
		t.Fatal("the records written are not the batch marked")
	}
	w := <-wires
	waitFor(t, "the written response's lease given back", w.Lease().Released)

	dropped := dialRaw(t, s.Addr())
	dropped.send(2, req)
	w = <-wires
	var size [4]byte
	if _, err := io.ReadFull(dropped.nc, size[:]); err != nil { // the write has begun
		t.Fatal(err)
	}
	dropped.nc.Close() // unread bytes: a reset, the write fails
	waitFor(t, "the dropped response's lease given back", w.Lease().Released)
}
