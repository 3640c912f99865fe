package test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func initProducerID(t *testing.T, cl *kgo.Client) (int64, int16) {
	t.Helper()
	resp := request[*kmsg.InitProducerIDResponse](t, cl, kmsg.NewPtrInitProducerIDRequest())
	if resp.ErrorCode != 0 {
		t.Fatalf("InitProducerId: error %d", resp.ErrorCode)
	}
	return resp.ProducerID, resp.ProducerEpoch
}

// Records, offsets, producer ids and idempotence state survive a restart.
func TestRestartKeepsDataOffsetsAndProducers(t *testing.T) {
	g := newGateway(t)
	g.createTopic("durable", 2)
	first := records("durable", 40)
	if err := g.client().ProduceSync(testCtx(t), first...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	raw := g.client()
	pid, epoch := initProducerID(t, raw)
	batch := makeBatch(batchSpec{records: 4, pid: pid, epoch: epoch, seq: 0, baseTime: 99})
	orig := produceRaw(t, raw, "durable", batch)
	if orig.ErrorCode != 0 {
		t.Fatalf("idempotent produce: error %d", orig.ErrorCode)
	}

	g.restart()

	raw = g.client()
	if retry := produceRaw(t, raw, "durable", batch); retry.ErrorCode != 0 || retry.BaseOffset != orig.BaseOffset {
		t.Fatalf("retry after restart: error %d offset %d, want the original %d", retry.ErrorCode, retry.BaseOffset, orig.BaseOffset)
	}
	if end := listOffset(t, raw, "durable", -1); end.Offset != orig.BaseOffset+4 {
		t.Fatalf("high watermark %d after a duplicate, want %d", end.Offset, orig.BaseOffset+4)
	}
	if pid2, _ := initProducerID(t, raw); pid2 <= pid {
		t.Fatalf("producer id %d after restart, want > %d (never reused)", pid2, pid)
	}
	second := records("durable", 80)[40:]
	if err := g.client().ProduceSync(testCtx(t), second...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got := consumeN(t, g, "durable", 80+4)
	var fromClients []*kgo.Record
	for _, r := range got {
		if string(r.Key[:1]) != "k" || len(r.Key) > 3 { // not the raw batch
			fromClients = append(fromClients, r)
		}
	}
	sameRecords(t, append(first, second...), got)
	if len(fromClients) != 80 {
		t.Fatalf("%d client records after restart, want 80", len(fromClients))
	}
}
