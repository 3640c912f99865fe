package kafka

import (
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/resolvertest"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkProduceFrame sends Produce requests of one batch (one record
// of about 1 MB, a full franz-go batch) over a real connection, one at a
// time, acks=all, and answers each: the frame read, the produce path and
// the group commit. -benchmem counts the whole process, so B/op is what
// the server allocates per request (the frame buffer, unless pooled).
func BenchmarkProduceFrame(b *testing.B) {
	res := resolvertest.Open(b, resolver.Config{NumPartitions: 1, AutoCreate: true})
	if _, err := res.CreateTopic("bench", 1, 1, nil, false); err != nil {
		b.Fatal(err)
	}
	s, err := NewServer(Config{Resolver: res})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Start(ln); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	req, _ := rawProduce(9, "bench", 1000000)
	frame := []byte{0, 0, 0, 0}
	frame = kbin.AppendInt16(frame, req.Key())
	frame = kbin.AppendInt16(frame, req.GetVersion())
	frame = kbin.AppendInt32(frame, 1)
	frame = kbin.AppendNullableString(frame, nil)
	frame = append(frame, 0) // flexible header's tags
	frame = req.AppendTo(frame)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	var size [4]byte
	var body []byte
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := nc.Write(frame); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(nc, size[:]); err != nil {
			b.Fatal(err)
		}
		body = append(body[:0], make([]byte, binary.BigEndian.Uint32(size[:]))...)
		if _, err := io.ReadFull(nc, body); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	resp := kmsg.NewPtrProduceResponse()
	resp.SetVersion(9)
	if err := resp.ReadFrom(body[5:]); err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		b.Fatalf("last answer: %v %+v", err, resp.Topics)
	}
}
