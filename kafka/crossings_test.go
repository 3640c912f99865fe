package kafka

import (
	"maps"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kgateway/kgateway/resolver"
)

// crossings counts the costly steps one request takes through the
// resolver (resolver.TraceCrossings), by kind.
type crossings struct {
	mu sync.Mutex
	n  map[string]int
}

func traceCrossings(t *testing.T) *crossings {
	c := &crossings{n: map[string]int{}}
	t.Cleanup(resolver.TraceCrossings(func(kind string) {
		c.mu.Lock()
		c.n[kind]++
		c.mu.Unlock()
	}))
	return c
}

// take returns the counts so far and starts again from zero.
func (c *crossings) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.n
	c.n = map[string]int{}
	return out
}

// TestCrossingsPerPartition: a produce of one batch to one partition and
// a fetch of one partition each resolve the partition once, a produce
// parses the batch headers once (kafka/produce's parse, handed down to
// the write), and neither takes the partition's bounds apart from its
// write or its read: a fetch's answer comes from the one snapshot it
// read under, a produce's from its write. Any other crossing (one more
// resolution, parse, peek, snapshot or read) fails it.
func TestCrossingsPerPartition(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"t": 2})
	c := traceCrossings(t)

	req, _ := rawProduce(9, "t", 100)
	p := ask(g.c, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("produce: code %d base %d", p.ErrorCode, p.BaseOffset)
	}
	if got, want := c.take(), map[string]int{"lookup": 1, "parse": 1}; !maps.Equal(got, want) {
		t.Fatalf("one produce partition crossed %v, want %v", got, want)
	}

	resp := g.fetch(fetchReq(0, -1, []fetchPart{{topic: "t", partition: 0}}, nil))
	f := resp.Topics[0].Partitions[0]
	if f.ErrorCode != 0 || f.HighWatermark != 1 || len(f.RecordBatches) == 0 {
		t.Fatalf("fetch: code %d hwm %d %d bytes", f.ErrorCode, f.HighWatermark, len(f.RecordBatches))
	}
	if got, want := c.take(), map[string]int{"lookup": 1, "read": 1}; !maps.Equal(got, want) {
		t.Fatalf("one fetch partition crossed %v, want %v", got, want)
	}
}
