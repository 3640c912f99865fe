package main

// sessions.go is workload 7: fetch sessions (KIP-227) at --session-partitions
// partitions. One consumer (franz-go, which uses sessions whenever the
// server grants one) reads a topic of that many partitions: first one
// record from every partition, then --probes waves of one record into one
// partition each. A hook records the size of every Fetch request the
// consumer writes, so the table shows what sessions save on the wire: the
// first (full) fetch names every partition, later (incremental) ones only
// the partitions whose offset moved. The wave latency (produce → consumed)
// shows that an idle session wakes for one partition among many.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const topicW7 = "kgbench-w7"

// fetchBytes is a kgo hook that records the bytes of every Fetch request.
type fetchBytes struct {
	mu    sync.Mutex
	sizes []int
}

func (f *fetchBytes) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, n int, _, _ time.Duration, err error) {
	if key != 1 || err != nil {
		return
	}
	f.mu.Lock()
	f.sizes = append(f.sizes, n)
	f.mu.Unlock()
}

func (f *fetchBytes) snapshot() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sizes)
}

func (b *bench) fetchSessions(ctx context.Context, res *Result) error {
	parts := b.cfg.SessionPartitions
	if err := b.createTopics(ctx, map[string]int32{topicW7: int32(parts)}); err != nil {
		return err
	}
	prod, err := b.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer prod.Close()
	sizes := &fetchBytes{}
	cons, err := b.client(kgo.ConsumeTopics(topicW7), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.WithHooks(sizes))
	if err != nil {
		return err
	}
	defer cons.Close()

	rs := make([]*kgo.Record, parts)
	for i := range rs {
		rs[i] = &kgo.Record{Topic: topicW7, Partition: int32(i), Value: b.payload}
	}
	if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return err
	}
	if _, err := consumeAtLeast(ctx, cons, parts, nil); err != nil {
		return err
	}
	first := len(sizes.snapshot())
	var waves []time.Duration
	for i := range b.cfg.Probes {
		start := time.Now()
		r := &kgo.Record{Topic: topicW7, Partition: int32(i * 7919 % parts), Value: b.payload}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			return err
		}
		if _, err := consumeAtLeast(ctx, cons, 1, nil); err != nil {
			return err
		}
		waves = append(waves, time.Since(start))
	}
	s := sizes.snapshot()
	if len(s) == 0 {
		return fmt.Errorf("kgbench: the consumer sent no fetch")
	}
	// The largest request is a full fetch naming every partition (the
	// client may send a first one before it knows them all); the waves'
	// requests are incremental unless the server keeps no sessions.
	waveReqs := slices.Clone(s[min(first, len(s)-1):])
	slices.Sort(waveReqs)
	res.Latency = percentiles("wave", waves, 0.5, 0.99)
	res.Notes = fmt.Sprintf("%d partitions: largest fetch request %d B; during the waves median %d B (%d requests in all)",
		parts, slices.Max(s), waveReqs[len(waveReqs)/2], len(s))
	return nil
}
