package server

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/etcdtest"
	"github.com/kgateway/kgateway/cluster/node"
	"github.com/kgateway/kgateway/test/s3server"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
)

// BenchmarkClusterProduce measures acknowledged produce throughput and
// acknowledgement latency of a cluster of 1 and 3 in-process nodes
// against cluster.commit.interval.ms, beside a single node on local disk
// in the same run. Each iteration is one 1 KiB record acknowledged with
// acks=all by one of 16 concurrent synchronous producers on 6 partitions.
// KGW_CLUSTER_BENCH_S3=1 puts the objects on the S3 server (versitygw)
// instead of a file:// bucket; KGW_CLUSTER_BENCH_DEPTH=n sets
// node.Config.CommitDepth (1: no pipelining). Besides the latencies it
// reports the mean object PUT, etcd transactions and whole group commit
// (put-ms, etcd-ms, commit-ms) and the records per commit.
//
//	go test -run '^$' -bench ClusterProduce -benchtime 4000x ./server/
func BenchmarkClusterProduce(b *testing.B) {
	b.Run("local", func(b *testing.B) { benchProduce(b, startLocal(b)) })
	for _, nodes := range []int32{1, 3} {
		for _, interval := range []time.Duration{0, 5 * time.Millisecond, 20 * time.Millisecond} {
			b.Run(fmt.Sprintf("nodes=%d/interval=%v", nodes, interval), func(b *testing.B) {
				c, servers := newBenchServers(b, nodes, interval)
				before := commitTotals(b, servers)
				benchProduce(b, c)
				reportCommitBreakdown(b, before, commitTotals(b, servers))
			})
		}
	}
}

// BenchmarkClusterCommitDepth compares cluster.commit.depth 1 (one group
// commit at a time) and 2 (pipelined: the next object is written while
// the last one publishes, in-order publication) under the same load: two
// clusters of the same size run side by side in the process, one per
// depth, each with its own etcd and bucket, and take turns, b.N/8
// acknowledgements at a time, the order swapped every turn, so that the
// load of a shared machine weighs on both alike. Each turn is
// BenchmarkClusterProduce's: 16 synchronous producers, 1 KiB records,
// acks=all, 6 partitions, the default commit interval (5 ms). It reports
// each depth's ack p50 and p99, acks/s while its turns ran, and mean
// group commit (d1-, d2-). KGW_CLUSTER_BENCH_S3=1 puts the objects on
// versitygw (one server per cluster); KGW_CLUSTER_BENCH_PUT_DELAY=20ms
// makes every PUT wait 20 ms more (a remote store's latency, not work
// for this machine).
//
//	KGW_CLUSTER_BENCH_S3=1 go test -run '^$' -bench ClusterCommitDepth -benchtime 4000x ./server/
func BenchmarkClusterCommitDepth(b *testing.B) {
	for _, nodes := range []int32{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			const turns = 8
			type side struct {
				name    string
				cl      *kgo.Client
				servers []*Server
				lat     [][]time.Duration
				elapsed time.Duration
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			value := make([]byte, 1024)
			var sides []*side
			for _, depth := range []int{1, 2} {
				addrs, servers := newBenchServersDepth(b, nodes, 5*time.Millisecond, depth)
				cl := produceClient(b, ctx, addrs, value)
				sides = append(sides, &side{name: fmt.Sprintf("d%d-", depth), cl: cl, servers: servers})
			}
			before := make([]commitSums, len(sides))
			for i, sd := range sides {
				before[i] = commitTotals(b, sd.servers)
			}
			b.ResetTimer()
			left := b.N
			for turn := range turns {
				n := left / (turns - turn)
				left -= n
				for i := range sides {
					sd := sides[(turn+i)%len(sides)]
					lat, elapsed := runOps(n, 16, func(int) (time.Duration, error) {
						t0 := time.Now()
						err := sd.cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr()
						return time.Since(t0), err
					}, b)
					sd.lat = append(sd.lat, lat...)
					sd.elapsed += elapsed
				}
			}
			b.StopTimer()
			for i, sd := range sides {
				reportLatencies(b, sd.lat, sd.elapsed, sd.name, sd.name+"acks/s")
				after := commitTotals(b, sd.servers)
				if r := after.replicated - before[i].replicated; r > 0 {
					b.ReportMetric(1000*(after.replicate-before[i].replicate)/r, sd.name+"commit-ms")
				}
			}
		})
	}
}

// produceClient is a client of seeds producing to a new 6-partition
// topic "bench", each partition written once already.
func produceClient(b *testing.B, ctx context.Context, seeds []string, value []byte) *kgo.Client {
	const parts = 6
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("bench"),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, parts, 1, nil, "bench"); err != nil {
		b.Fatal(err)
	}
	warmPartitions(b, ctx, cl, parts, value)
	return cl
}

// newBenchCluster starts nodes in-process nodes and returns their
// addresses.
func newBenchCluster(b *testing.B, nodes int32, interval time.Duration) []string {
	addrs, _ := newBenchServers(b, nodes, interval)
	return addrs
}

// newBenchServers starts nodes in-process nodes and returns their
// addresses and servers; KGW_CLUSTER_BENCH_DEPTH sets their commit depth.
func newBenchServers(b *testing.B, nodes int32, interval time.Duration) ([]string, []*Server) {
	depth, _ := strconv.Atoi(os.Getenv("KGW_CLUSTER_BENCH_DEPTH"))
	return newBenchServersDepth(b, nodes, interval, depth)
}

// newBenchServersDepth is newBenchServers with the commit depth given (0:
// the default).
func newBenchServersDepth(b *testing.B, nodes int32, interval time.Duration, depth int) ([]string, []*Server) {
	bucket := (&url.URL{Scheme: "file", Path: b.TempDir()}).String()
	if os.Getenv("KGW_CLUSTER_BENCH_S3") != "" {
		bucket = s3server.Start(b).URL
	}
	etcd := etcdtest.Start(b).Endpoint()
	// An object store whose PUT is a network round trip, not work for
	// this machine's cores: each PUT waits this long before it completes.
	putDelay, _ := time.ParseDuration(os.Getenv("KGW_CLUSTER_BENCH_PUT_DELAY"))
	var addrs []string
	var servers []*Server
	for id := range nodes {
		cfg := Config{DataDir: b.TempDir(), Listen: "127.0.0.1:0", ObjectStoreURL: bucket,
			Cluster: &node.Config{NodeID: id + 1, Endpoints: []string{etcd}, SessionTimeout: 2 * time.Second,
				CommitInterval: interval, CommitDepth: depth, Tick: 50 * time.Millisecond},
			Kafka: kafkaConfigFor(id + 1)}
		if putDelay > 0 {
			cfg.wrapBucket = func(inner *blob.Bucket) *blob.Bucket {
				bb, _ := newBlockingBucket(inner)
				return blob.NewBucket(slowPutBucket{bb, putDelay})
			}
		}
		s, err := Open(cfg)
		if err != nil {
			b.Fatal(err)
		}
		go s.Serve()
		b.Cleanup(func() { s.Close() })
		addrs = append(addrs, s.Addr().String())
		servers = append(servers, s)
	}
	return addrs, servers
}

// slowPutBucket is a bucket whose PUTs each take delay more, sleeping:
// the latency of a remote object store (KGW_CLUSTER_BENCH_PUT_DELAY).
type slowPutBucket struct {
	*blockingBucket
	delay time.Duration
}

func (b slowPutBucket) NewTypedWriter(ctx context.Context, key, contentType string, opts *driver.WriterOptions) (driver.Writer, error) {
	w, err := b.blockingBucket.NewTypedWriter(ctx, key, contentType, opts)
	if err != nil {
		return nil, err
	}
	return slowWriter{w, b.delay}, nil
}

type slowWriter struct {
	driver.Writer
	delay time.Duration
}

func (w slowWriter) Close() error {
	time.Sleep(w.delay)
	return w.Writer.Close()
}

// commitSums are the sums and counts of the group commit histograms of
// some servers, and of their Produce requests' durations: where an
// acknowledgement's time goes.
type commitSums struct {
	commits               float64 // group commits (cluster: with a publication)
	put, etcd, replicate  float64 // seconds, summed
	published, replicated float64 // commits counted by each histogram
	produce, produced     float64 // Produce requests: seconds summed, count
}

// commitTotals sums the group commit histograms of servers.
func commitTotals(b *testing.B, servers []*Server) commitSums {
	var t commitSums
	for _, s := range servers {
		mfs, err := s.metrics.Registry.Gather()
		if err != nil {
			b.Fatal(err)
		}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				h := m.GetHistogram()
				if h == nil {
					continue
				}
				switch mf.GetName() {
				case "kgateway_cluster_commit_put_seconds":
					t.put += h.GetSampleSum()
					t.published += float64(h.GetSampleCount())
				case "kgateway_cluster_commit_etcd_seconds":
					t.etcd += h.GetSampleSum()
				case "kgateway_group_commit_sync_seconds":
					t.replicate += h.GetSampleSum()
					t.replicated += float64(h.GetSampleCount())
				case "kgateway_request_duration_seconds":
					for _, l := range m.GetLabel() {
						if l.GetName() == "api" && l.GetValue() == "Produce" {
							t.produce += h.GetSampleSum()
							t.produced += float64(h.GetSampleCount())
						}
					}
				}
			}
		}
	}
	return t
}

// reportCommitBreakdown reports the mean object PUT, etcd transaction
// and whole group commit (Replicate) of the commits between before and
// after, and how many records each commit carried.
func reportCommitBreakdown(b *testing.B, before, after commitSums) {
	if n := reportCommitMeans(b, before, after); n > 0 {
		b.ReportMetric(float64(b.N)/n, "records/commit")
	}
}

// reportCommitMeans reports the mean object PUT, etcd transaction and
// whole group commit of the commits between before and after (the
// machine's PUT cost beside a latency measured meanwhile), and returns
// how many commits published.
func reportCommitMeans(b *testing.B, before, after commitSums) float64 {
	n := after.published - before.published
	if n == 0 {
		return 0
	}
	b.ReportMetric(1000*(after.put-before.put)/n, "put-ms")
	b.ReportMetric(1000*(after.etcd-before.etcd)/n, "etcd-ms")
	if r := after.replicated - before.replicated; r > 0 {
		b.ReportMetric(1000*(after.replicate-before.replicate)/r, "commit-ms")
	}
	if p := after.produced - before.produced; p > 0 {
		// A Produce's time in its server, from its arrival to its
		// answer: its wait for a group commit to start beside the
		// commit itself (commit-ms), the rest of an acknowledgement
		// being the client's and the network's.
		b.ReportMetric(1000*(after.produce-before.produce)/p, "produce-ms")
	}
	return n
}

func benchProduce(b *testing.B, seeds []string) {
	const producers, parts = 16, 6
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("bench"),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, parts, 1, nil, "bench"); err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 1024)
	warmPartitions(b, ctx, cl, parts, value)
	b.SetBytes(int64(len(value)))
	lat, elapsed := runTimed(b, producers, func(int) (time.Duration, error) {
		t0 := time.Now()
		err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr()
		return time.Since(t0), err
	})
	reportLatencies(b, lat, elapsed, "", "acks/s")
}

// runTimed runs b.N operations on workers goroutines, op(worker) each
// returning the latency to record, with the benchmark timer running
// only meanwhile; it returns each worker's latencies and the time taken.
// An error stops its worker.
func runTimed(b *testing.B, workers int, op func(worker int) (time.Duration, error)) ([][]time.Duration, time.Duration) {
	b.ResetTimer()
	lat, elapsed := runOps(b.N, workers, op, b)
	b.StopTimer()
	return lat, elapsed
}

// runOps runs n operations on workers goroutines as runTimed does,
// leaving the benchmark timer alone.
func runOps(n, workers int, op func(worker int) (time.Duration, error), b *testing.B) ([][]time.Duration, time.Duration) {
	lat := make([][]time.Duration, workers)
	var wg sync.WaitGroup
	var next sync.Mutex
	left := n
	start := time.Now()
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				if left == 0 {
					next.Unlock()
					return
				}
				left--
				next.Unlock()
				d, err := op(i)
				if err != nil {
					b.Error(err)
					return
				}
				lat[i] = append(lat[i], d)
			}
		}()
	}
	wg.Wait()
	return lat, time.Since(start)
}

// reportLatencies reports the p50, p99 and mean of lat (named
// prefix+"p50-ms", prefix+"p99-ms", prefix+"mean-ms": the mean to set
// beside the servers' means) and how many there were per second of
// elapsed (rate).
func reportLatencies(b *testing.B, lat [][]time.Duration, elapsed time.Duration, prefix, rate string) {
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	q := func(f float64) float64 { return float64(all[int(f*float64(len(all)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), prefix+"p50-ms")
	b.ReportMetric(q(0.99), prefix+"p99-ms")
	var sum time.Duration
	for _, d := range all {
		sum += d
	}
	b.ReportMetric(float64(sum.Microseconds())/1000/float64(len(all)), prefix+"mean-ms")
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), rate)
}

// BenchmarkClusterThroughput measures produce and then consume
// throughput, pipelined (franz-go batching, many records in flight), of
// a cluster of 1 and 3 in-process nodes beside a single node on local
// disk. Each iteration is one 1 KiB record.
//
//	go test -run '^$' -bench ClusterThroughput -benchtime 50000x ./server/
func BenchmarkClusterThroughput(b *testing.B) {
	b.Run("local", func(b *testing.B) { benchThroughput(b, startLocal(b)) })
	for _, nodes := range []int32{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			benchThroughput(b, newBenchCluster(b, nodes, 5*time.Millisecond))
		})
	}
}

func benchThroughput(b *testing.B, seeds []string) {
	const parts = 6
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("tp"),
		kgo.ConsumeTopics("tp"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, parts, 1, nil, "tp"); err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 1024)
	warmPartitions(b, ctx, cl, parts, value)
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range b.N {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	produced := time.Since(start)
	start = time.Now()
	for n := 0; n < b.N+parts; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			b.Fatal(ctx.Err())
		}
		n += fs.NumRecords()
	}
	consumed := time.Since(start)
	b.StopTimer()
	mb := float64(b.N) * float64(len(value)) / 1e6
	b.ReportMetric(mb/produced.Seconds(), "produce-MB/s")
	b.ReportMetric(mb/consumed.Seconds(), "consume-MB/s")
}

// startLocal serves a single node on local disk and returns its address.
func startLocal(b *testing.B) []string {
	s, err := Open(Config{DataDir: b.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve()
	b.Cleanup(func() { s.Close() })
	return []string{s.Addr().String()}
}

// warmPartitions produces parts records, each retried until it is
// acknowledged, before the clock starts: placement has run by then.
func warmPartitions(b *testing.B, ctx context.Context, cl *kgo.Client, parts int, value []byte) {
	for p := range int32(parts) {
		for cl.ProduceSync(ctx, &kgo.Record{Value: value, Partition: p}).FirstErr() != nil {
			if ctx.Err() != nil {
				b.Fatal(ctx.Err())
			}
		}
	}
}

// BenchmarkClusterTxn measures transactions of a cluster of 1 and 3
// in-process nodes beside a single node on local disk: each iteration is
// one transaction of 6 records of 1 KiB, one per partition, committed by
// one of 4 transactional producers; the metrics are the commit's latency
// (EndTxn), transactions per second (the whole cycle: begin, produce,
// commit, back to back per producer) and how long a record takes to be
// read by a read_committed consumer (visible-: from its produce to its
// fetch). KGW_CLUSTER_BENCH_S3=1 puts the objects on the S3 server.
//
//	go test -run '^$' -bench ClusterTxn -benchtime 400x ./server/
func BenchmarkClusterTxn(b *testing.B) { benchClusterTxn(b, false) }

// benchClusterTxn is BenchmarkClusterTxn, each transaction committing
// offsets too with withOffsets (BenchmarkClusterTxnOffsets).
func benchClusterTxn(b *testing.B, withOffsets bool) {
	b.Run("local", func(b *testing.B) { benchTxn(b, startLocal(b), withOffsets) })
	for _, nodes := range []int32{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			c, servers := newBenchServers(b, nodes, 5*time.Millisecond)
			before := commitTotals(b, servers)
			benchTxn(b, c, withOffsets)
			// Group commits per transaction, over all nodes: what a
			// change to when commits start costs in PUTs.
			n := reportCommitMeans(b, before, commitTotals(b, servers))
			b.ReportMetric(n/float64(b.N), "commits/txn")
		})
	}
}

func benchTxn(b *testing.B, seeds []string, withOffsets bool) {
	const producers, parts = 4, 6
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	value := make([]byte, 1024)
	setup, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("txbench"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		b.Fatal(err)
	}
	defer setup.Close()
	if _, err := kadm.NewClient(setup).CreateTopic(ctx, parts, 1, nil, "txbench"); err != nil {
		b.Fatal(err)
	}
	warmPartitions(b, ctx, setup, parts, value)
	var topicID [16]byte
	if withOffsets {
		topicID = benchTopicID(b, ctx, setup)
	}
	visible := watchVisible(b, ctx, seeds)
	cls := make([]*kgo.Client, producers)
	for i := range cls {
		cls[i], err = kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("txbench"),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionalID(fmt.Sprintf("bench-%d", i)),
			kgo.ProducerLinger(0))
		if err != nil {
			b.Fatal(err)
		}
		defer cls[i].Close()
	}
	var mu sync.Mutex
	committed := map[string]time.Time{} // by record key: when its EndTxn was answered
	seq := make([]int, producers)
	lat, elapsed := runTimed(b, producers, func(i int) (time.Duration, error) {
		cl := cls[i]
		if err := cl.BeginTransaction(); err != nil {
			return 0, err
		}
		seq[i]++
		key := []byte(fmt.Sprintf("%d-%d", i, seq[i]))
		for p := range int32(parts) {
			cl.Produce(ctx, &kgo.Record{Key: key, Value: value, Partition: p}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			return 0, err
		}
		if withOffsets {
			if err := benchTxnOffsetCommit(ctx, cl, fmt.Sprintf("bench-%d", i), topicID, int64(seq[i])); err != nil {
				return 0, err
			}
		}
		t0 := time.Now()
		err := cl.EndTransaction(ctx, kgo.TryCommit)
		done := time.Now()
		mu.Lock()
		committed[string(key)] = done
		mu.Unlock()
		return done.Sub(t0), err
	})
	reportLatencies(b, lat, elapsed, "commit-", "txn/s")
	vis, after := visible(parts*b.N, committed)
	reportLatencies(b, [][]time.Duration{vis}, elapsed, "visible-", "visible/s")
	reportSigned(b, after, "after-commit-")
}

// reportSigned reports the p50 and p99 of ds, which may be negative.
func reportSigned(b *testing.B, ds []time.Duration, prefix string) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	q := func(f float64) float64 { return float64(ds[int(f*float64(len(ds)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), prefix+"p50-ms")
	b.ReportMetric(q(0.99), prefix+"p99-ms")
}

// watchVisible consumes txbench read_committed and returns a function
// that waits (up to a minute) for n records produced from now on and
// gives each one's time from its produce (the record's timestamp, set by
// the producer) to its fetch, and for each transaction (its records'
// key) the time from its EndTxn answer (committed) to the fetch of the
// last of its records: negative when the records were readable before
// the answer reached the producer.
func watchVisible(b *testing.B, ctx context.Context, seeds []string) func(n int, committed map[string]time.Time) ([]time.Duration, []time.Duration) {
	since := time.Now()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics("txbench"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	var mu sync.Mutex
	var seen []time.Duration
	last := map[string]time.Time{}
	pctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for pctx.Err() == nil {
			fs := cl.PollFetches(pctx)
			now := time.Now()
			mu.Lock()
			fs.EachRecord(func(r *kgo.Record) {
				if r.Timestamp.After(since) {
					seen = append(seen, now.Sub(r.Timestamp))
					last[string(r.Key)] = now
				}
			})
			mu.Unlock()
		}
	}()
	return func(n int, committed map[string]time.Time) ([]time.Duration, []time.Duration) {
		defer func() { stop(); <-done }()
		for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			got := len(seen)
			mu.Unlock()
			if got >= n {
				break
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(seen) < n {
			b.Errorf("read_committed consumer saw %d of %d committed records", len(seen), n)
		}
		var after []time.Duration
		for k, at := range last {
			if c, ok := committed[k]; ok {
				after = append(after, at.Sub(c))
			}
		}
		return append([]time.Duration(nil), seen...), after
	}
}
