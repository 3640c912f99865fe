package test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// killRounds is how many times TestKillDuringProduceAndCommit kills the
// binary: 5, or 50 under KGW_SOAK.
func killRounds() int {
	if os.Getenv("KGW_SOAK") != "" {
		return 50
	}
	return 5
}

const (
	killTopic      = "kill"
	killPartitions = 3
	killGroup      = "kill-group"
)

// recordPos is where an acknowledged record was written.
type recordPos struct {
	partition int32
	offset    int64
}

// loadRun is one round of load on a running binary: idempotent acks=all
// producers and a group committing offsets, recording what was
// acknowledged.
type loadRun struct {
	mu    sync.Mutex
	acked map[string]recordPos // value -> acknowledged position
	// commits: per partition, [last acknowledged, last attempted] offset.
	commits map[int32][2]int64
}

// TestKillDuringProduceAndCommit runs the real binary, SIGKILLs it while
// franz-go producers send with acks=all and a group commits offsets, and
// restarts it on the same data dir, round after round: every record ever
// acknowledged is present exactly once at its acknowledged offset, and
// every acknowledged commit is present (D1, D2, O1).
func TestKillDuringProduceAndCommit(t *testing.T) {
	testProcessStop(t, syscall.SIGKILL, killRounds())
}

// TestSIGTERMUnderLoad stops the binary gracefully mid-produce: it exits
// cleanly and, after a restart, every acknowledged record and commit is
// there.
func TestSIGTERMUnderLoad(t *testing.T) {
	testProcessStop(t, syscall.SIGTERM, 2)
}

func testProcessStop(t *testing.T, sig syscall.Signal, rounds int) {
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	all := map[string]recordPos{}
	allCommits := map[int32][2]int64{}
	p := startBinary(t, dir, "--num-partitions", fmt.Sprint(killPartitions))
	start := time.Now()
	for round := range rounds {
		run := &loadRun{acked: map[string]recordPos{}, commits: map[int32][2]int64{}}
		target := 100 + rng.IntN(900)
		run.load(t, p, round, target, func() {
			if sig == syscall.SIGKILL {
				p.cmd.Process.Kill()
				<-p.done
			} else {
				p.stop(t)
			}
		})
		for v, pos := range run.acked {
			all[v] = pos
		}
		for part, c := range run.commits {
			allCommits[part] = c
		}
		p = startBinary(t, dir)
		verifyAcked(t, p.addr, all)
		verifyCommits(t, p.addr, allCommits)
		t.Logf("round %d: %v after %d acknowledged records (%d in all), verified", round, sig, len(run.acked), len(all))
	}
	p.stop(t)
	t.Logf("%d rounds of %v in %v", rounds, sig, time.Since(start).Round(time.Millisecond))
}

// TestKillWhileReusingSegments is TestKillDuringProduceAndCommit with a
// small segment.bytes and retention.bytes, so that nearly every new ledger
// is written over a trimmed one's file (storage I8) and the SIGKILL leaves
// old frames past the open ledger's end, on the real file system. Each
// restart that checks runs without retention, so nothing is trimmed while
// it reads: no old frame may come back (offsets dense, every acknowledged
// record above the log start where it was acknowledged, none twice).
func TestKillWhileReusingSegments(t *testing.T) {
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	reuse := []string{"--num-partitions", fmt.Sprint(killPartitions), "--log-segment-bytes", "8192",
		"--log-retention-bytes", "32768", "--log-retention-check-interval-ms", "20"}
	all := map[string]recordPos{}
	for round := range killRounds() {
		p := startBinary(t, dir, reuse...)
		if round > 0 {
			// Wait until a ledger is being written over a spare: one
			// exists (retention trimmed), then is gone (a Roll took it).
			// The first round creates the topic: franz-go's first batches
			// are large and each fills a ledger, so it rolls little.
			produceUntil(t, p.addr, fmt.Sprintf("round%d-trim", round), all, func() bool { return countSpares(t, dir) == 1 })
			produceUntil(t, p.addr, fmt.Sprintf("round%d-reuse", round), all, func() bool { return countSpares(t, dir) == 0 })
		}
		run := &loadRun{acked: map[string]recordPos{}, commits: map[int32][2]int64{}}
		run.load(t, p, round, 1000+rng.IntN(3000), func() {
			p.cmd.Process.Kill()
			<-p.done
		})
		for v, pos := range run.acked {
			all[v] = pos
		}
		p = startBinary(t, dir)
		verifyAcked(t, p.addr, all)
		p.stop(t)
		t.Logf("round %d: killed after %d acknowledged records, verified", round, len(run.acked))
	}
}

// produceUntil produces batches of records (values prefix-0, prefix-1,
// ...), synchronously, recording where each was acknowledged, until done
// reports true (or the test's deadline).
func produceUntil(t *testing.T, addr, prefix string, acked map[string]recordPos, done func() bool) {
	t.Helper()
	ctx := testCtx(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(killTopic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for n := 0; !done(); {
		if ctx.Err() != nil {
			t.Fatalf("%s: condition not reached after %d records", prefix, n)
		}
		var rs []*kgo.Record
		for range 30 {
			rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "%s-%d", prefix, n)})
			n++
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			acked[string(r.Value)] = recordPos{r.Partition, r.Offset}
		}
	}
}

// countSpares counts the spare files (storage I8) in a data directory.
func countSpares(t *testing.T, dir string) int {
	t.Helper()
	spares, err := storage.SpareFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(spares)
}

// load produces and commits until target records are acknowledged, then
// calls stop (which ends the process) and returns once every client
// callback is done.
func (run *loadRun) load(t *testing.T, p *proc, round, target int, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic(killTopic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(time.Millisecond), kgo.AllowAutoTopicCreation(),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.RecordDeliveryTimeout(5*time.Second),
		kgo.RetryTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	reached := make(chan struct{})
	var once sync.Once
	var inflight sync.WaitGroup
	sent := 0
	produce := func() {
		for ctx.Err() == nil {
			v := fmt.Sprintf("round%d-rec%d", round, sent)
			sent++
			inflight.Add(1)
			cl.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
				defer inflight.Done()
				if err != nil {
					return
				}
				run.mu.Lock()
				run.acked[v] = recordPos{r.Partition, r.Offset}
				n := len(run.acked)
				run.mu.Unlock()
				if n >= target {
					once.Do(func() { close(reached) })
				}
			})
		}
	}
	go produce()
	var commitWG sync.WaitGroup
	commitWG.Go(func() { run.commitLoop(ctx, p.addr) })
	select {
	case <-reached:
	case <-ctx.Done():
		t.Fatalf("round %d: %d records acknowledged before the deadline", round, len(run.acked))
	}
	stop()
	cancel()
	commitWG.Wait()
	cl.Close()
	inflight.Wait()
}

// commitLoop commits, for every partition, the count of records
// acknowledged so far (any increasing number will do), as a simple
// (memberless) group, until ctx ends.
func (run *loadRun) commitLoop(ctx context.Context, addr string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryTimeout(time.Second))
	if err != nil {
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for ctx.Err() == nil {
		run.mu.Lock()
		off := int64(len(run.acked))
		offs := kadm.Offsets{}
		for part := range int32(killPartitions) {
			c, ok := run.commits[part]
			if !ok {
				c[0] = -1
			}
			c[1] = max(c[1], off)
			run.commits[part] = c
			offs.Add(kadm.Offset{Topic: killTopic, Partition: part, At: off, LeaderEpoch: -1})
		}
		run.mu.Unlock()
		resp, err := adm.CommitOffsets(ctx, killGroup, offs)
		if err != nil || resp.Error() != nil {
			continue
		}
		run.mu.Lock()
		for part := range int32(killPartitions) {
			c := run.commits[part]
			c[0] = max(c[0], off)
			run.commits[part] = c
		}
		run.mu.Unlock()
	}
}

// verifyAcked reads every partition from its log start to its end: the
// offsets are dense, and each acknowledged record at or above its
// partition's log start is there exactly once, at its acknowledged offset
// (below it, retention may have removed it).
func verifyAcked(t *testing.T, addr string, acked map[string]recordPos) {
	t.Helper()
	ctx := testCtx(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	starts, err := adm.ListStartOffsets(ctx, killTopic)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, killTopic)
	if err != nil {
		t.Fatal(err)
	}
	parts := map[int32]kgo.Offset{}
	next := map[int32]int64{}
	remaining := 0
	ends.Each(func(o kadm.ListedOffset) {
		start, _ := starts.Lookup(killTopic, o.Partition)
		next[o.Partition] = start.Offset
		if o.Offset > start.Offset {
			parts[o.Partition] = kgo.NewOffset().At(start.Offset)
			remaining++
		}
	})
	seen := map[string]recordPos{}
	if remaining == 0 {
		if len(acked) > 0 {
			t.Fatalf("no records after restart, %d acknowledged", len(acked))
		}
		return
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{killTopic: parts}))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	for remaining > 0 {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d records before the deadline; %d partitions unfinished", len(seen), remaining)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != next[r.Partition] {
				t.Fatalf("partition %d: record at offset %d, want %d (D3: dense)", r.Partition, r.Offset, next[r.Partition])
			}
			next[r.Partition]++
			v := string(r.Value)
			if prev, dup := seen[v]; dup {
				t.Fatalf("record %q at %d/%d and again at %d/%d", v, prev.partition, prev.offset, r.Partition, r.Offset)
			}
			seen[v] = recordPos{r.Partition, r.Offset}
			if end, _ := ends.Lookup(killTopic, r.Partition); r.Offset == end.Offset-1 {
				remaining--
			}
		})
	}
	for v, want := range acked {
		if start, _ := starts.Lookup(killTopic, want.partition); want.offset < start.Offset {
			continue
		}
		if got, ok := seen[v]; !ok || got != want {
			t.Fatalf("acknowledged %q at %d/%d: found %v at %d/%d", v, want.partition, want.offset, ok, got.partition, got.offset)
		}
	}
}

// verifyCommits checks that the group's offsets are at least the last
// acknowledged commit and at most the last attempted one.
func verifyCommits(t *testing.T, addr string, commits map[int32][2]int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got, err := kadm.NewClient(cl).FetchOffsets(testCtx(t), killGroup)
	if err != nil {
		t.Fatal(err)
	}
	for part, c := range commits {
		o, ok := got.Lookup(killTopic, part)
		switch {
		case c[0] < 0 && !ok:
		case !ok || o.Err != nil:
			t.Fatalf("partition %d: acknowledged commit %d lost (%v)", part, c[0], o.Err)
		case o.At < c[0] || o.At > c[1]:
			t.Fatalf("partition %d: committed %d, acknowledged %d, last tried %d", part, o.At, c[0], c[1])
		}
	}
}
