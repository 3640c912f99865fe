package main

// probes.go holds the latency workloads: 4 (fixed offered load), 5 (metadata
// at partition scale, plus RSS) and 6 (fetch at the head vs the tail of a
// large partition).

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// loadRecorder collects workload 4's samples; callbacks and the consumer
// goroutine add to it concurrently.
type loadRecorder struct {
	mu struct {
		sync.Mutex
		ack, e2e []time.Duration
		ackErr   error
	}
}

func (l *loadRecorder) addAck(d time.Duration, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		if l.mu.ackErr == nil {
			l.mu.ackErr = err
		}
		return
	}
	l.mu.ack = append(l.mu.ack, d)
}

func (l *loadRecorder) addE2E(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.e2e = append(l.mu.e2e, d)
}

// offeredLoad is workload 4: produce at --rate for --duration while a
// consumer tails the partition. Each record carries its *intended* send
// time, so a server that falls behind shows it in the latencies instead of
// silently slowing the offered load (no coordinated omission).
func (b *bench) offeredLoad(ctx context.Context, res *Result) error {
	if err := b.createTopics(ctx, map[string]int32{topicW4: 1}); err != nil {
		return err
	}
	// A linger would add the client's own batching wait to every ack
	// latency, the same for every system (--load-linger).
	prod, err := b.client(kgo.ProducerLinger(b.cfg.LoadLinger))
	if err != nil {
		return err
	}
	defer prod.Close()
	cons, err := b.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topicW4: {0: kgo.NewOffset().AtStart()},
	}))
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
	sent := b.paceProducer(ctx, prod, rec, pace{topic: topicW4, mbps: b.cfg.OfferedMBps, duration: b.cfg.Duration}, start)
	if err := prod.Flush(ctx); err != nil {
		return err
	}
	elapsed := time.Since(start)
	waitDrained(ctx, sent, rec.e2eCount)
	stopCons()
	return b.fillLoadResult(res, rec, sent, <-consumed, elapsed)
}

// pace is an offered load: records of --record-size to topic at mbps for
// duration.
type pace struct {
	topic    string
	mbps     float64
	duration time.Duration
}

// paceProducer sends records on p's schedule until p.duration has passed
// and returns how many it sent. Each record carries its intended send
// time (sentAt), and its ack latency is measured from it.
func (b *bench) paceProducer(ctx context.Context, cl *kgo.Client, rec *loadRecorder, p pace, start time.Time) int {
	perSec := p.mbps * bytesPerMB / float64(b.cfg.RecordSize)
	interval := time.Duration(float64(time.Second) / perSec)
	total := int(perSec * p.duration.Seconds())
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	sent := 0
	for sent < total && ctx.Err() == nil {
		due := min(total, int(time.Since(start)/interval)+1)
		for ; sent < due; sent++ {
			intended := start.Add(time.Duration(sent) * interval)
			v := make([]byte, b.cfg.RecordSize)
			copy(v, b.payload)
			binary.BigEndian.PutUint64(v, uint64(intended.UnixNano()))
			cl.Produce(ctx, &kgo.Record{Topic: p.topic, Value: v}, func(_ *kgo.Record, err error) {
				rec.addAck(time.Since(intended), err)
			})
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	return sent
}

// sentAt decodes the intended send time embedded by paceProducer.
func sentAt(v []byte) time.Time {
	if len(v) < 8 {
		return time.Time{}
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v)))
}

// e2eCount is how many records the consumer has delivered so far.
func (l *loadRecorder) e2eCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.mu.e2e)
}

// waitDrained gives the consumers up to drainAfterLoad to deliver want
// records, as count reports them.
func waitDrained(ctx context.Context, want int, count func() int) {
	ctx, cancel := context.WithTimeout(ctx, drainAfterLoad)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for count() < want {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (b *bench) fillLoadResult(res *Result, rec *loadRecorder, sent, consumed int, elapsed time.Duration) error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.mu.ackErr != nil {
		return fmt.Errorf("produce: %w", rec.mu.ackErr)
	}
	b.setThroughput(res, len(rec.mu.ack), elapsed)
	res.Latency = append(percentiles("ack", rec.mu.ack, 0.5, 0.99, 0.999),
		percentiles("e2e", rec.mu.e2e, 0.5, 0.99)...)
	res.Notes = fmt.Sprintf("offered %.0f MB/s for %s; sent %d, consumed %d",
		b.cfg.OfferedMBps, b.cfg.Duration, sent, consumed)
	return nil
}

// metadataAtScale is workload 5: create --partitions-scale partitions over
// --topics-scale topics, then time full Metadata requests and read RSS.
func (b *bench) metadataAtScale(ctx context.Context, res *Result) error {
	topics := make(map[string]int32, b.cfg.TopicsScale)
	per, extra := b.cfg.PartitionsScale/b.cfg.TopicsScale, b.cfg.PartitionsScale%b.cfg.TopicsScale
	for i := 0; i < b.cfg.TopicsScale; i++ {
		topics[fmt.Sprintf("kgbench-w5-%04d", i)] = int32(per + btoi(i < extra))
	}
	createStart := time.Now()
	if err := b.createTopics(ctx, topics); err != nil {
		return err
	}
	createTook := time.Since(createStart)
	cl, err := b.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	broker := cl.SeedBrokers()[0]
	var seen int
	samples, err := probe(ctx, b.cfg.Probes, func() error {
		resp, err := broker.Request(ctx, kmsg.NewPtrMetadataRequest()) // nil Topics: all
		if err != nil {
			return err
		}
		seen = countPartitions(resp.(*kmsg.MetadataResponse))
		return nil
	})
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	res.Latency = percentiles("metadata", samples, 0.5, 0.99)
	res.Notes = fmt.Sprintf("%d partitions/%d topics created in %s; metadata lists %d partitions",
		b.cfg.PartitionsScale, b.cfg.TopicsScale, createTook.Round(time.Millisecond), seen)
	res.RSSBytes, res.PeakRSSBytes, err = b.sys.memory()
	return err
}

func countPartitions(m *kmsg.MetadataResponse) int {
	n := 0
	for _, t := range m.Topics {
		n += len(t.Partitions)
	}
	return n
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// probe runs fn once to warm up (connection, ApiVersions) and then n timed
// times, returning the durations.
func probe(ctx context.Context, n int, fn func() error) ([]time.Duration, error) {
	if err := fn(); err != nil {
		return nil, err
	}
	out := make([]time.Duration, 0, n)
	for i := 0; i < n && ctx.Err() == nil; i++ {
		start := time.Now()
		if err := fn(); err != nil {
			return out, err
		}
		out = append(out, time.Since(start))
	}
	return out, ctx.Err()
}

// bigPartitionFetch is workload 6: fill one partition with --big-bytes,
// then time single Fetch requests at offset 0 (cold, oldest data) and at
// the tail (newest record). MB/s and records/s report the fill.
func (b *bench) bigPartitionFetch(ctx context.Context, res *Result) error {
	if err := b.createTopics(ctx, map[string]int32{topicW6: 1}); err != nil {
		return err
	}
	cl, err := b.client(kgo.DefaultProduceTopic(topicW6))
	if err != nil {
		return err
	}
	defer cl.Close()
	n := int(b.cfg.BigBytes / int64(b.cfg.RecordSize))
	start := time.Now()
	if err := b.produceN(ctx, cl, topicW6, n); err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	b.setThroughput(res, n, time.Since(start))
	broker := cl.SeedBrokers()[0]
	id, err := topicID(ctx, broker, topicW6)
	if err != nil {
		return err
	}
	for _, at := range []struct {
		name   string
		offset int64
	}{{"fetch@0", 0}, {"fetch@tail", tailOffset(n, b.cfg.RecordSize)}} {
		samples, err := probe(ctx, b.cfg.Probes, func() error {
			return fetchOnce(ctx, broker, id, at.offset)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", at.name, err)
		}
		res.Latency = append(res.Latency, percentiles(at.name, samples, 0.5, 0.99)...)
	}
	res.Notes = fmt.Sprintf("MB/s = fill of %d records; each fetch asks for 1 MiB, tail = last 1 MiB", n)
	res.RSSBytes, res.PeakRSSBytes, err = b.sys.memory()
	return err
}

// tailOffset is where the last fetchMaxBytes of an n-record partition
// start, so head and tail fetches return the same amount of data and differ
// only in how old (how cold) it is.
func tailOffset(n, recordSize int) int64 {
	return int64(max(0, n-fetchMaxBytes/recordSize))
}

// topicID reads the topic ID, which Fetch v13+ addresses topics by.
func topicID(ctx context.Context, broker *kgo.Broker, topic string) ([16]byte, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := broker.Request(ctx, req)
	if err != nil {
		return [16]byte{}, err
	}
	for _, t := range resp.(*kmsg.MetadataResponse).Topics {
		if t.Topic != nil && *t.Topic == topic {
			return t.TopicID, kerr.ErrorForCode(t.ErrorCode)
		}
	}
	return [16]byte{}, fmt.Errorf("metadata: topic %s missing", topic)
}

// fetchMaxBytes bounds each workload 6 fetch, as a consumer's
// max.partition.fetch.bytes (1 MiB by default) would.
const fetchMaxBytes = 1 << 20

// fetchOnce sends one sessionless Fetch for partition 0 at offset and
// checks that record data came back.
func fetchOnce(ctx context.Context, broker *kgo.Broker, id [16]byte, offset int64) error {
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis = 500
	req.MinBytes = 1
	req.MaxBytes = fetchMaxBytes
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topicW6, id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset = offset
	rp.PartitionMaxBytes = fetchMaxBytes
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := broker.Request(ctx, req)
	if err != nil {
		return err
	}
	fr := resp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(fr.ErrorCode); err != nil {
		return err
	}
	for _, t := range fr.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return err
			}
			if len(p.RecordBatches) == 0 {
				return fmt.Errorf("fetch at %d returned no records", offset)
			}
			return nil
		}
	}
	return fmt.Errorf("fetch at %d: empty response", offset)
}
