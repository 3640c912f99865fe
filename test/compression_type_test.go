package test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A topic's compression.type other than producer is the codec every batch
// is stored with, as Kafka's LogValidator recompresses on append: the
// fetched batch's codec attribute is the topic's, whatever the producer
// used, and the records read back unchanged. (Kafka 4.4 takes uncompressed,
// gzip, snappy, lz4, zstd and producer.)
func TestTopicCompressionTypeRecompresses(t *testing.T) {
	g := newGateway(t)
	codecs := map[string]int{"uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
	for name, want := range codecs {
		topic := "ct-" + name
		resp, err := g.admin().CreateTopic(testCtx(t), 1, 1, map[string]*string{"compression.type": &name}, topic)
		if err != nil || resp.Err != nil {
			t.Fatalf("create %s: %v %v", topic, err, resp.Err)
		}
		// The producer compresses with another codec (snappy, or gzip
		// for the snappy topic), idempotently.
		prodCodec := kgo.SnappyCompression()
		if name == "snappy" {
			prodCodec = kgo.GzipCompression()
		}
		prod := g.client(kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(prodCodec))
		var recs []*kgo.Record
		for i := range 20 {
			recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "%s value %d", name, i)})
		}
		if err := prod.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
			t.Fatalf("%s: produce: %v", name, err)
		}
		p := fetchRaw(t, g.client(), topic, 0, 0)
		if p.ErrorCode != 0 || len(p.RecordBatches) < 61 {
			t.Fatalf("%s: fetch code %d, %d bytes", name, p.ErrorCode, len(p.RecordBatches))
		}
		for b := p.RecordBatches; len(b) >= 61; {
			if got := int(binary.BigEndian.Uint16(b[21:23]) & 0x07); got != want {
				t.Fatalf("%s: stored batch codec %d, want %d", name, got, want)
			}
			b = b[12+int(binary.BigEndian.Uint32(b[8:12])):]
		}
		got := consumeN(t, g, topic, 20)
		for i, r := range got {
			if string(r.Value) != fmt.Sprintf("%s value %d", name, i) || r.Offset != int64(i) {
				t.Fatalf("%s: record %d read back as offset %d %q", name, i, r.Offset, r.Value)
			}
		}
	}
}
