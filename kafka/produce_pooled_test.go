package kafka

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/resolvertest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Pooled frames (storage "Pooled frames"), end to end: Produce frames
// large enough to be read into pooled buffers are written, cached, served
// to a consumer tailing the partition, evicted from a small tail cache
// and reused for later frames, all at once; the consumer reads every
// record as it was produced. (The rule itself, a frame reused only after
// its last holder, is storage's TestPooledFrameHeldUntilLastHolder; this
// is the wiring from the connection's reader to the Produce handler's
// release.)
func TestPooledProduceFramesServeIntact(t *testing.T) {
	const records, size = 48, 100 << 10
	res := resolvertest.OpenTailCache(t, resolver.Config{NumPartitions: 1, AutoCreate: true}, 4*size)
	if _, err := res.CreateTopic("pooled", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, Config{Resolver: res})
	value := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, size) }
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	cons, err := kgo.NewClient(kgo.SeedBrokers(s.Addr().String()), kgo.ConsumeTopics("pooled"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(testDeadline))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	done := make(chan error, 1)
	go func() {
		n := 0
		for n < records {
			fs := cons.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				done <- err
				return
			}
			for _, r := range fs.Records() {
				if r.Offset != int64(n) || !bytes.Equal(r.Value, value(n)) {
					done <- fmt.Errorf("record at offset %d (want %d): %d bytes, first %#x, want all %#x",
						r.Offset, n, len(r.Value), r.Value[:min(1, len(r.Value))], byte(n))
					return
				}
				n++
			}
		}
		done <- nil
	}()
	prod, err := kgo.NewClient(kgo.SeedBrokers(s.Addr().String()), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression())) // frames of about size bytes: pooled
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range records {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "pooled", Value: value(i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
