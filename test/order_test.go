package test

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// appendFrame appends req as one request frame (v1/v2 header).
func appendFrame(dst []byte, corrID int32, req kmsg.Request) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = kbin.AppendInt16(dst, req.Key())
	dst = kbin.AppendInt16(dst, req.GetVersion())
	dst = kbin.AppendInt32(dst, corrID)
	dst = kbin.AppendNullableString(dst, nil)
	if req.IsFlexible() {
		dst = append(dst, 0)
	}
	dst = req.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// readResponse reads one response frame into resp (its version set) and
// returns its correlation id.
func readResponse(t *testing.T, nc net.Conn, resp kmsg.Response) int32 {
	t.Helper()
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		t.Fatalf("read response: %v", err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(nc, body); err != nil {
		t.Fatalf("read response: %v", err)
	}
	corr := int32(binary.BigEndian.Uint32(body))
	body = body[4:]
	if resp.IsFlexible() && resp.Key() != 18 {
		body = body[1:] // empty tagged fields
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("decode key %d: %v", resp.Key(), err)
	}
	return corr
}

func commitReq(group, topic string, offset int64) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.SetVersion(8)
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Offset, rp.LeaderEpoch = offset, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// Requests in effect one at a time: requests pipelined on one connection take effect in request order.
// Each round sends OffsetCommit 2i+1, OffsetCommit 2i+2 and OffsetFetch
// in one write, as the Java consumer's commitAsync and librdkafka
// pipeline commits; the fetch must see 2i+2 every time, and the
// responses come back in order.
func TestPipelinedOffsetCommitsInOrder(t *testing.T) {
	g := newGateway(t)
	g.createTopic("commits", 1)
	nc, err := net.DialTimeout("tcp", g.addr, testDeadline)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(4 * testDeadline))
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.SetVersion(7)
	fetch.Group = "ordered"
	ft := kmsg.NewOffsetFetchRequestTopic()
	ft.Topic, ft.Partitions = "commits", []int32{0}
	fetch.Topics = append(fetch.Topics, ft)
	var buf []byte
	for i := range int64(300) {
		buf = appendFrame(buf[:0], int32(3*i), commitReq("ordered", "commits", 2*i+1))
		buf = appendFrame(buf, int32(3*i+1), commitReq("ordered", "commits", 2*i+2))
		buf = appendFrame(buf, int32(3*i+2), fetch)
		if _, err := nc.Write(buf); err != nil {
			t.Fatal(err)
		}
		for j := range int32(2) {
			resp := kmsg.NewPtrOffsetCommitResponse()
			resp.SetVersion(8)
			if corr := readResponse(t, nc, resp); corr != int32(3*i)+j {
				t.Fatalf("round %d: response %d answers %d", i, 3*i+int64(j), corr)
			}
			if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
				t.Fatalf("round %d: commit error %d", i, code)
			}
		}
		resp := kmsg.NewPtrOffsetFetchResponse()
		resp.SetVersion(7)
		if corr := readResponse(t, nc, resp); corr != int32(3*i+2) {
			t.Fatalf("round %d: fetch response answers %d", i, corr)
		}
		if got := resp.Topics[0].Partitions[0].Offset; got != 2*i+2 {
			t.Fatalf("round %d: committed offset %d after committing %d then %d", i, got, 2*i+1, 2*i+2)
		}
	}
}
