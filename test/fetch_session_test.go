package test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// fetchSizes records the bytes of every Fetch request a client writes.
type fetchSizes struct {
	mu    sync.Mutex
	sizes []int
}

func (f *fetchSizes) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, n int, _, _ time.Duration, err error) {
	if key != 1 || err != nil {
		return
	}
	f.mu.Lock()
	f.sizes = append(f.sizes, n)
	f.mu.Unlock()
}

func (f *fetchSizes) snapshot() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.sizes...)
}

// franz-go uses fetch sessions (KIP-227) by default. Against 1,000
// partitions its first fetch names them all; later ones are incremental
// and name only partitions whose offset moved. Every record arrives once,
// in order, through both kinds.
func TestFetchSessionFranzGo(t *testing.T) {
	const parts = 1000
	g := newGateway(t)
	g.createTopic("many", parts)
	prod := g.client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	sizes := &fetchSizes{}
	cons := g.client(kgo.ConsumeTopics("many"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.WithHooks(sizes), kgo.FetchMaxWait(100*time.Millisecond))
	ctx := testCtx(t)

	next := make(map[int32]int64)
	consume := func(want int) {
		t.Helper()
		got := 0
		for got < want {
			fs := cons.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("consumed %d of %d records before the deadline", got, want)
			}
			fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
			for _, r := range fs.Records() {
				if r.Offset != next[r.Partition] || string(r.Value) != fmt.Sprintf("%d@%d", r.Partition, r.Offset) {
					t.Fatalf("partition %d: got offset %d value %q, want offset %d", r.Partition, r.Offset, r.Value, next[r.Partition])
				}
				next[r.Partition]++
				got++
			}
		}
		if got != want {
			t.Fatalf("consumed %d records, want %d", got, want)
		}
	}
	produce := func(partitions []int32) {
		t.Helper()
		var rs []*kgo.Record
		for _, p := range partitions {
			rs = append(rs, &kgo.Record{Topic: "many", Partition: p, Value: fmt.Appendf(nil, "%d@%d", p, next[p])})
		}
		if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	all := make([]int32, parts)
	for i := range all {
		all[i] = int32(i)
	}
	produce(all)
	consume(parts)
	for wave := range 5 {
		few := []int32{int32(wave), int32(100 + wave*7), int32(parts - 1 - wave)}
		produce(few)
		consume(len(few))
	}

	s := sizes.snapshot()
	if len(s) < 3 {
		t.Fatalf("only %d fetch requests", len(s))
	}
	full, smallest := s[0], s[0]
	for _, n := range s {
		full, smallest = max(full, n), min(smallest, n)
	}
	// A full fetch names 1,000 partitions (tens of bytes each); an
	// incremental one names a handful.
	if full < parts*20 || smallest > full/20 {
		t.Fatalf("fetch request sizes %v: no incremental fetch (sessions not used?)", s)
	}
	t.Logf("fetch requests over %d partitions: full %d bytes, smallest incremental %d bytes (%d requests)", parts, full, smallest, len(s))
}
