package main

// omb.go holds two paced loads over many partitions: workload 14 is
// OpenMessaging Benchmark's standard load (workloads/1-topic-100-partitions-1kb:
// one topic of 100 partitions, one producer at 50,000 records/s of 1 KiB,
// one consumer), and workload 15 is 1,000 active partitions under
// --rate. Both report the acknowledged throughput and the publish (ack)
// and end-to-end latency at p50, p99 and p99.9, each record's latency
// measured from its intended send time.

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	ombPartitions  = 100
	ombRecordsPerS = 50_000
	ombRecordBytes = 1024
	// ombLinger is the OpenMessaging Benchmark Kafka driver's linger.ms.
	ombLinger          = time.Millisecond
	manyPartitions     = 1000
	topicW14, topicW15 = "kgbench-w14", "kgbench-w15"
	spreadMaxBuffered  = 100_000
)

// ombLoad is workload 14. The record size is OMB's 1 KiB whatever
// --record-size says; the producer spreads records over the partitions
// round robin, as OMB's driver does for records without a key.
func (b *bench) ombLoad(ctx context.Context, res *Result) error {
	p := pace{topic: topicW14, mbps: ombRecordsPerS * ombRecordBytes / bytesPerMB, duration: b.cfg.Duration}
	cfg := *b.cfg
	cfg.RecordSize = ombRecordBytes
	sized := newBench(&cfg, b.sys)
	return sized.spreadLoad(ctx, res, p, ombPartitions, ombLinger)
}

// manyPartitionsLoad is workload 15: --rate MB/s for --duration spread
// round robin over 1,000 partitions of one topic, with no linger, so that
// every partition is written all the time and each batch holds one or a
// few records.
func (b *bench) manyPartitionsLoad(ctx context.Context, res *Result) error {
	p := pace{topic: topicW15, mbps: b.cfg.OfferedMBps, duration: b.cfg.Duration}
	return b.spreadLoad(ctx, res, p, manyPartitions, b.cfg.LoadLinger)
}

// spreadLoad runs p over a topic of partitions partitions, with one
// consumer reading all of them from the start.
func (b *bench) spreadLoad(ctx context.Context, res *Result, p pace, partitions int32, linger time.Duration) error {
	// A topic of its own per run: its consumer reads from the start and
	// sees only this run's records.
	p.topic = fmt.Sprintf("%s-%d", p.topic, time.Now().UnixNano())
	if err := b.createTopics(ctx, map[string]int32{p.topic: partitions}); err != nil {
		return err
	}
	prod, err := b.client(kgo.ProducerLinger(linger), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.MaxBufferedRecords(spreadMaxBuffered))
	if err != nil {
		return err
	}
	defer prod.Close()
	cons, err := b.client(kgo.ConsumeTopics(p.topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cons.Close()
	rec := new(loadRecorder)
	consCtx, stopCons := context.WithCancel(ctx)
	defer stopCons()
	consumed := make(chan int, 1)
	go func() {
		n, _ := consumeAtLeast(consCtx, cons, int(^uint(0)>>1), func(r *kgo.Record) {
			rec.addE2E(time.Since(sentAt(r.Value)))
		})
		consumed <- n
	}()
	start := time.Now()
	sent := b.paceProducer(ctx, prod, rec, p, start)
	if err := prod.Flush(ctx); err != nil {
		return err
	}
	elapsed := time.Since(start)
	waitDrained(ctx, sent, rec.e2eCount)
	stopCons()
	if err := fillPacedResult(b, res, rec, p, sent, <-consumed, elapsed); err != nil {
		return err
	}
	res.Notes += fmt.Sprintf(" over %d partitions", partitions)
	return nil
}
