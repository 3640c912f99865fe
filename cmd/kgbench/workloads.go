package main

// workloads.go holds the workload table, the shared client helpers and the
// throughput workloads 1–3. The latency workloads 4–6 live in probes.go,
// workload 7 (fetch sessions) in sessions.go, workload 8 (transactions) in
// txns.go, workload 9 (the cost of read_committed) in isolation.go,
// workload 10 (rebalance time) in rebalance.go, workload 11 (share
// groups) in sharegroups.go, workload 12 (Kafka's
// kafka-producer-perf-test) in perftest.go, workload 13 (fairness between
// tenants) in tenants.go and workloads 14 and 15 (OpenMessaging
// Benchmark's standard load, 1,000 active partitions) in omb.go.
// Every workload uses the same franz-go configuration against every system
// (no compression, acks=all, --linger), so differences are the server's.

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	topicW1        = "kgbench-w1"
	topicW2        = "kgbench-w2"
	topicW4        = "kgbench-w4"
	topicW6        = "kgbench-w6"
	w2Partitions   = 32
	w2Producers    = 4
	bytesPerMB     = 1e6
	createBatch    = 10 // topics per CreateTopics request in workload 5
	drainAfterLoad = 10 * time.Second
	healthTimeout  = 15 * time.Second
)

var (
	errDependsOnW1  = errors.New("kgbench: needs a successful workload 1 in the same run")
	errUnresponsive = errors.New("kgbench: skipped, server stopped answering after an earlier failure")
)

// workloadNames are the table labels, indexed by workload number - 1.
var workloadNames = []string{
	"1 produce 1p×1",
	"2 produce 32p×4",
	"3 consume w1",
	"4 offered load",
	"5 metadata",
	"6 big partition fetch",
	"7 fetch sessions",
	"8 transactions",
	"9 read_committed cost",
	"10 rebalance",
	"11 share groups",
	"12 kafka-producer-perf-test",
	"13 fairness",
	"14 omb 1-topic-100-partitions-1kb",
	"15 1000 partitions offered load",
}

// isolationRows are workload 9's table rows: it compares two ways of
// reading the same data, and each gets a row (a MB/s bar) of its own.
var isolationRows = []string{"9 consume read_uncommitted", "9 consume read_committed"}

// workloadRows are the table rows workload n (1-based) fills: its name,
// except for workloads 9, 10 and 11, which fill several.
func (c *config) workloadRows(n int) []string {
	switch n {
	case workloadIsolation:
		return isolationRows
	case workloadRebalance:
		return rebalanceRows()
	case workloadShare:
		return c.shareRows()
	case workloadFairness:
		return fairnessRows
	}
	return []string{workloadNames[n-1]}
}

// bench is the state one system's run shares across workloads.
type bench struct {
	cfg       *config
	sys       *system
	payload   []byte       // random record value, shared read-only
	w1Records int          // records workload 1 acknowledged; 0 = not run or failed
	failed    bool         // some workload failed: check health before the next
	stats     *clientStats // --client-stats: every client's hook; nil when off
	tl        *timeline    // --timeline: every client's hook; nil when off
}

func newBench(cfg *config, sys *system) *bench {
	p := make([]byte, cfg.RecordSize)
	_, _ = rand.Read(p) // random bytes: nothing for a server to compress
	if cfg.Compression != "" && cfg.Compression != "none" {
		// Compressed runs measure decompression on the server: random
		// letters from a 16-letter alphabet compress about 2:1, like text.
		for i := range p {
			p[i] = 'a' + p[i]%16
		}
	}
	b := &bench{cfg: cfg, sys: sys, payload: p}
	if cfg.ClientStats {
		b.stats = newClientStats()
	}
	if cfg.Timeline {
		b.tl = newTimeline()
	}
	return b
}

// compressionCodecs maps --compression to franz-go's codec.
var compressionCodecs = map[string]kgo.CompressionCodec{
	"none":   kgo.NoCompression(),
	"gzip":   kgo.GzipCompression(),
	"snappy": kgo.SnappyCompression(),
	"lz4":    kgo.Lz4Compression(),
	"zstd":   kgo.ZstdCompression(),
}

// runWorkload runs workload n (1-based) under --workload-timeout and
// returns its rows (workloadRows). An error goes into every row without an
// outcome of its own; an errUnsupported one makes them "unsupported".
func (b *bench) runWorkload(ctx context.Context, n int) []Result {
	var rows []Result
	for _, name := range b.cfg.workloadRows(n) {
		rows = append(rows, Result{System: b.sys.name, Workload: name})
	}
	if err := b.healthy(ctx); err != nil {
		return withError(rows, err)
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.WorkloadTimeout)
	defer cancel()
	go func() { // a dead server ends the workload now, not at the timeout
		select {
		case <-b.sys.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	fns := []func(context.Context, *Result) error{
		b.produceOnePartition, b.produceManyPartitions, b.consumeW1,
		b.offeredLoad, b.metadataAtScale, b.bigPartitionFetch, b.fetchSessions,
		b.transactions, nil, nil, nil, b.producerPerfTest,
		nil, b.ombLoad, b.manyPartitionsLoad,
	}
	var err error
	switch n {
	// The workloads of several rows measure their phases themselves:
	// fills belong to no row.
	case workloadIsolation:
		err = b.isolationCost(ctx, &rows[0], &rows[1])
	case workloadRebalance:
		err = b.rebalance(ctx, rows)
	case workloadShare:
		err = b.shareGroups(ctx, rows)
	case workloadFairness:
		err = b.fairness(ctx, rows)
	default:
		label := fmt.Sprintf("%s-w%d", b.sys.name, n)
		err = b.observe(label, func() error {
			return b.measure(&rows[0], func() error { return fns[n-1](ctx, &rows[0]) })
		})
	}
	if errors.Is(err, errUnsupported) {
		return withUnsupported(rows, err) // the server is fine: no health check
	}
	if err == nil && !anyError(rows) {
		return rows
	}
	b.failed = true
	if b.sys.exitedWithin(time.Second) {
		err = b.sys.checkAlive() // the crash is the story, not the client's symptom
	}
	if err != nil {
		return withError(rows, err)
	}
	return rows
}

// withError marks every row that has no outcome yet (an error of its own
// or "unsupported") with err.
func withError(rows []Result, err error) []Result {
	for i := range rows {
		if rows[i].Error == "" && rows[i].Unsupported == "" {
			rows[i].Error = err.Error()
		}
	}
	return rows
}

// withUnsupported marks every row that has no outcome yet unsupported.
func withUnsupported(rows []Result, err error) []Result {
	for i := range rows {
		if rows[i].Error == "" && rows[i].Unsupported == "" {
			rows[i].Unsupported = err.Error()
		}
	}
	return rows
}

func anyError(rows []Result) bool {
	return slices.ContainsFunc(rows, func(r Result) bool { return r.Error != "" })
}

// measure runs fn and adds its wall time, the server's CPU time and the
// client's (kgbench's own) CPU time to res.
func (b *bench) measure(res *Result, fn func() error) error {
	cpu0, cpuErr := b.sys.cpuSeconds()
	client0 := selfCPUSeconds()
	start := time.Now()
	err := fn()
	res.Seconds += time.Since(start).Seconds()
	res.ClientCPUSeconds += selfCPUSeconds() - client0
	if cpu1, err := b.sys.cpuSeconds(); err == nil && cpuErr == nil {
		res.ServerCPUSeconds += cpu1 - cpu0
	}
	return err
}

// healthy reports a dead server, and after a failed workload also one that
// no longer answers a Ping within healthTimeout, so that a wedged server
// costs one --workload-timeout rather than one per remaining workload.
func (b *bench) healthy(ctx context.Context) error {
	if err := b.sys.checkAlive(); err != nil || !b.failed {
		return err
	}
	cl, err := b.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, min(healthTimeout, b.cfg.WorkloadTimeout))
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		return fmt.Errorf("%w: %v", errUnresponsive, err)
	}
	return nil
}

// client returns a franz-go client with the harness-wide settings.
func (b *bench) client(extra ...kgo.Opt) (*kgo.Client, error) {
	opts := b.clientOpts()
	if !b.cfg.Idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	return kgo.NewClient(append(opts, extra...)...)
}

// clientOpts are the settings every client kgbench makes shares, the
// security ones (--security-protocol) included.
func (b *bench) clientOpts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(b.sys.addr),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(b.cfg.Linger),
		kgo.ProducerBatchCompression(b.codec()),
		kgo.RecordDeliveryTimeout(b.cfg.WorkloadTimeout),
		kgo.ClientID("kgbench"),
	}
	if b.stats != nil {
		opts = append(opts, kgo.WithHooks(b.stats))
	}
	if b.tl != nil {
		opts = append(opts, kgo.WithHooks(b.tl))
	}
	return append(opts, b.cfg.securityOpts...)
}

// codec is the producer codec --compression names (none when unset, as in
// results written before the flag existed).
func (b *bench) codec() kgo.CompressionCodec {
	if c, ok := compressionCodecs[b.cfg.Compression]; ok {
		return c
	}
	return kgo.NoCompression()
}

// createTopics creates each topic with its partition count, createBatch
// topics of equal count per CreateTopics request; "already exists" is fine
// so a rerun against a kept data dir works.
func (b *bench) createTopics(ctx context.Context, partitions map[string]int32) error {
	cl, err := b.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	byCount := map[int32][]string{}
	for topic, p := range partitions {
		byCount[p] = append(byCount[p], topic)
	}
	for p, topics := range byCount {
		slices.Sort(topics)
		for chunk := range slices.Chunk(topics, createBatch) {
			resps, err := adm.CreateTopics(ctx, p, 1, nil, chunk...)
			if err != nil {
				return fmt.Errorf("create topics: %w", err)
			}
			for _, r := range resps.Sorted() {
				if r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists) {
					return fmt.Errorf("create topic %s: %w", r.Topic, r.Err)
				}
			}
		}
	}
	return waitTopicsLed(ctx, adm, partitions)
}

// topicsReadyTimeout bounds waitTopicsLed.
const topicsReadyTimeout = time.Minute

// waitTopicsLed waits until Metadata shows every topic with all its
// partitions led. Apache Kafka answers CreateTopics once the controller
// has the topic, before the broker leads its partitions; a produce in that
// gap fails with UNKNOWN_TOPIC_OR_PARTITION once franz-go's few retries
// for unknown topics run out. kgateway and kfake lead a partition as soon
// as they answer, so for them this is one Metadata request.
func waitTopicsLed(ctx context.Context, adm *kadm.Client, partitions map[string]int32) error {
	ctx, cancel := context.WithTimeout(ctx, topicsReadyTimeout)
	defer cancel()
	topics := slices.Sorted(maps.Keys(partitions))
	for {
		md, err := adm.Metadata(ctx, topics...)
		if err == nil {
			err = topicsLed(md, partitions)
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topics not led after creation: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// topicsLed returns an error naming the first topic of partitions that md
// does not show with all its partitions led.
func topicsLed(md kadm.Metadata, partitions map[string]int32) error {
	for topic, n := range partitions {
		td, ok := md.Topics[topic]
		switch {
		case !ok:
			return fmt.Errorf("%s: not in metadata", topic)
		case td.Err != nil:
			return fmt.Errorf("%s: %w", topic, td.Err)
		case len(td.Partitions) < int(n):
			return fmt.Errorf("%s: %d of %d partitions", topic, len(td.Partitions), n)
		}
		for _, p := range td.Partitions {
			if p.Err != nil || p.Leader < 0 {
				return fmt.Errorf("%s/%d: leader %d: %v", topic, p.Partition, p.Leader, p.Err)
			}
		}
	}
	return nil
}

// produceN produces n copies of the payload to topic and waits for every
// acknowledgement; it returns the first produce error.
func (b *bench) produceN(ctx context.Context, cl *kgo.Client, topic string, n int) error {
	var (
		firstErr atomic.Pointer[error]
		wg       sync.WaitGroup
	)
	wg.Add(n)
	cb := func(_ *kgo.Record, err error) {
		if err != nil {
			firstErr.CompareAndSwap(nil, &err)
		}
		wg.Done()
	}
	for i := 0; i < n; i++ {
		if firstErr.Load() != nil || ctx.Err() != nil {
			wg.Add(-(n - i)) // nothing more will be sent
			break
		}
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: b.payload}, cb)
	}
	wg.Wait()
	if p := firstErr.Load(); p != nil {
		return *p
	}
	return ctx.Err()
}

// setThroughput fills MB/s and records/s from records moved in elapsed.
func (b *bench) setThroughput(res *Result, records int, elapsed time.Duration) {
	secs := elapsed.Seconds()
	res.Records = records
	res.RecordsPerSec = float64(records) / secs
	res.MBps = float64(records) * float64(b.cfg.RecordSize) / bytesPerMB / secs
}

// produceOnePartition is workload 1: one producer, one partition.
func (b *bench) produceOnePartition(ctx context.Context, res *Result) error {
	if err := b.createTopics(ctx, map[string]int32{topicW1: 1}); err != nil {
		return err
	}
	cl, err := b.client(kgo.DefaultProduceTopic(topicW1))
	if err != nil {
		return err
	}
	defer cl.Close()
	start := time.Now()
	b.tl.begin()
	if err := b.produceN(ctx, cl, topicW1, b.cfg.Records); err != nil {
		return err
	}
	elapsed := time.Since(start)
	b.tl.write(b.sys.name+" w1", 0, elapsed)
	b.setThroughput(res, b.cfg.Records, elapsed)
	b.w1Records = b.cfg.Records
	return nil
}

// produceManyPartitions is workload 2: four producers over 32 partitions,
// N records in total, aggregate throughput.
func (b *bench) produceManyPartitions(ctx context.Context, res *Result) error {
	if err := b.createTopics(ctx, map[string]int32{topicW2: w2Partitions}); err != nil {
		return err
	}
	clients := make([]*kgo.Client, w2Producers)
	for i := range clients {
		cl, err := b.client()
		if err != nil {
			return err
		}
		defer cl.Close()
		clients[i] = cl
	}
	errs := make([]error, w2Producers)
	var wg sync.WaitGroup
	start := time.Now()
	for i, cl := range clients {
		n := b.cfg.Records / w2Producers
		if i == 0 {
			n += b.cfg.Records % w2Producers
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.produceN(ctx, cl, topicW2, n)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	b.setThroughput(res, b.cfg.Records, time.Since(start))
	return nil
}

// consumeW1 is workload 3: read all of workload 1 from offset 0.
func (b *bench) consumeW1(ctx context.Context, res *Result) error {
	if b.w1Records == 0 {
		return errDependsOnW1
	}
	opts := []kgo.Opt{kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topicW1: {0: kgo.NewOffset().At(0)},
	})}
	if n := b.cfg.FetchPartitionBytes; n > 0 { // --fetch-partition-bytes
		opts = append(opts, kgo.FetchMaxPartitionBytes(n), kgo.FetchMaxBytes(max(n, 50<<20)))
	}
	cl, err := b.client(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	start := time.Now()
	b.tl.begin()
	got, err := consumeAtLeast(ctx, cl, b.w1Records, nil)
	if err != nil {
		return fmt.Errorf("after %d of %d records: %w", got, b.w1Records, err)
	}
	elapsed := time.Since(start)
	b.tl.write(b.sys.name+" w3", 1, elapsed)
	b.setThroughput(res, got, elapsed)
	return nil
}

// consumeAtLeast polls until want records arrived or ctx ends, calling
// onRecord (if set) for each. Fetch errors other than the context's are
// remembered and returned if the target is never reached.
func consumeAtLeast(ctx context.Context, cl *kgo.Client, want int, onRecord func(*kgo.Record)) (int, error) {
	var got int
	var lastErr error
	for got < want {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return got, errors.Join(ctx.Err(), lastErr)
		}
		fetches.EachError(func(_ string, _ int32, err error) { lastErr = err })
		fetches.EachRecord(func(r *kgo.Record) {
			got++
			if onRecord != nil {
				onRecord(r)
			}
		})
	}
	return got, nil
}

// selfCPUSeconds is this process's user+system CPU time: the clients'
// (every server runs in a child process of its own).
func selfCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
