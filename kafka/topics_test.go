package kafka

import (
	"errors"
	"testing"

	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/resolvertest"
)

// partitionOf runs for every partition of every produce and fetch: it
// answers from the binding without copying the topic's configs, and it
// still refuses partitions the topic does not have.
func TestPartitionOfCopiesNothing(t *testing.T) {
	res := resolvertest.Open(t, resolver.Config{NumPartitions: 1, RetentionCheckInterval: -1})
	cfgs := map[string]string{"retention.ms": "60000", "segment.bytes": "1048576", "max.message.bytes": "2000000"}
	if _, err := res.CreateTopic("t", 3, 1, cfgs, false); err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(Config{Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if n, err := s.partitionOf("t", 2, false); err != nil || n != 3 {
		t.Fatalf("partitionOf(t, 2) = %d, %v; want 3 partitions", n, err)
	}
	for _, p := range []int32{-1, 3} {
		if _, err := s.partitionOf("t", p, false); !errors.Is(err, resolver.ErrUnknownTopic) {
			t.Errorf("partitionOf(t, %d) = %v, want ErrUnknownTopic", p, err)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { s.partitionOf("t", 1, false) }); allocs != 0 {
		t.Errorf("partitionOf allocates %.0f times per call, want 0 (no copy of the topic's configs)", allocs)
	}
}
