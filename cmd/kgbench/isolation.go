package main

// isolation.go is workload 9: what read_committed costs when there are no
// transactions. It fills one partition with --records plain
// (non-transactional) records, then reads all of it --isolation-passes
// times with read_uncommitted and as many times with read_committed, each
// read by a new consumer from offset 0. The passes alternate in ABBA order
// (uncommitted, committed, committed, uncommitted, ...), so that a drift of
// the machine during the workload (page cache, a neighbour's load) weighs
// on both isolation levels alike.
//
// Each level has a row: MB/s and records/s are the median over its passes,
// wall time and CPU the mean per pass (comparable with workload 3's one
// read); the fill belongs to neither row. The read_committed row's notes
// give its ratio to read_uncommitted and the passes' spread, which is the
// noise that ratio is to be judged against.

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	topicW9           = "kgbench-w9"
	workloadIsolation = 9 // this workload's number: it fills two rows
)

// isolationPass is one full read: its isolation level and the row it
// counts in.
type isolationPass struct {
	level kgo.IsolationLevel
	row   *Result
	mbps  *[]float64
}

// isolationCost is workload 9 (see the top of this file).
func (b *bench) isolationCost(ctx context.Context, uncommitted, committed *Result) error {
	if err := b.fillIsolationTopic(ctx); err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	var ruRates, rcRates []float64
	ru := isolationPass{kgo.ReadUncommitted(), uncommitted, &ruRates}
	rc := isolationPass{kgo.ReadCommitted(), committed, &rcRates}
	for _, p := range abbaOrder(ru, rc, b.cfg.IsolationPasses) {
		err := b.measure(p.row, func() error {
			start := time.Now()
			if err := b.readAll(ctx, topicW9, b.cfg.Records, p.level); err != nil {
				return err
			}
			*p.mbps = append(*p.mbps, float64(b.cfg.Records)*float64(b.cfg.RecordSize)/bytesPerMB/time.Since(start).Seconds())
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", isolationName(p.level), err)
		}
	}
	b.fillIsolationRow(uncommitted, ruRates)
	b.fillIsolationRow(committed, rcRates)
	committed.Notes = join("; ", committed.Notes, fmt.Sprintf("read_committed/read_uncommitted: MB/s ×%.3f%s",
		median(rcRates)/median(ruRates), cpuRatio(committed.ServerCPUSeconds, uncommitted.ServerCPUSeconds)))
	return nil
}

// minCPUForRatio is the least server CPU time per pass worth a ratio:
// /proc counts it in ticks of 10 ms.
const minCPUForRatio = 0.1

// cpuRatio is ", server CPU ×r" for committed/uncommitted CPU seconds, or
// nothing when either is too small to be more than a tick count.
func cpuRatio(committed, uncommitted float64) string {
	if committed < minCPUForRatio || uncommitted < minCPUForRatio {
		return ""
	}
	return fmt.Sprintf(", server CPU ×%.3f", committed/uncommitted)
}

// abbaOrder lists passes of a and b, n of each, as a b b a a b ...
func abbaOrder[T any](a, b T, n int) []T {
	out := make([]T, 0, 2*n)
	for i := range n {
		if i%2 == 0 {
			out = append(out, a, b)
		} else {
			out = append(out, b, a)
		}
	}
	return out
}

func (b *bench) fillIsolationTopic(ctx context.Context) error {
	if err := b.createTopics(ctx, map[string]int32{topicW9: 1}); err != nil {
		return err
	}
	cl, err := b.client(kgo.DefaultProduceTopic(topicW9))
	if err != nil {
		return err
	}
	defer cl.Close()
	return b.produceN(ctx, cl, topicW9, b.cfg.Records)
}

// readAll reads n records of partition 0 of topic from offset 0 with a new
// consumer at the given isolation level.
func (b *bench) readAll(ctx context.Context, topic string, n int, level kgo.IsolationLevel) error {
	cl, err := b.client(
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(0)}}),
		kgo.FetchIsolationLevel(level),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	got, err := consumeAtLeast(ctx, cl, n, nil)
	if err != nil {
		return fmt.Errorf("after %d of %d records: %w", got, n, err)
	}
	return nil
}

// fillIsolationRow turns one level's sums over its passes into the row.
func (b *bench) fillIsolationRow(res *Result, rates []float64) {
	passes := float64(len(rates))
	res.Records = b.cfg.Records
	res.MBps = median(rates)
	res.RecordsPerSec = res.MBps * bytesPerMB / float64(b.cfg.RecordSize)
	res.Seconds /= passes
	res.ServerCPUSeconds /= passes
	res.ClientCPUSeconds /= passes
	res.Notes = fmt.Sprintf("%d passes of %d records, alternating with the other isolation level: MB/s %s; seconds and CPU per pass",
		len(rates), b.cfg.Records, fmtSpread(rates, fmtRate))
}

func isolationName(l kgo.IsolationLevel) string {
	if l == kgo.ReadCommitted() {
		return "read_committed"
	}
	return "read_uncommitted"
}
