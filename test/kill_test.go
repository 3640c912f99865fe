package test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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

// Offset commits of a kill round: one synchronous commit every
// commitEvery, and a round is not stopped before minCommits of them were
// acknowledged (so that every round checks O1 on real commits).
const (
	commitEvery = 10 * time.Millisecond
	minCommits  = 5
)

// loadRun is one round of load on a running binary: idempotent acks=all
// producers and a group committing offsets, recording what was
// acknowledged.
type loadRun struct {
	mu    sync.Mutex
	acked map[string]recordPos // value -> acknowledged position
	// commits: per partition, [last acknowledged, last attempted] offset.
	commits map[int32][2]int64
	// nextCommit is the offset the next commit sends. It starts above
	// every earlier round's, so offsets increase across rounds and an
	// older round's commit cannot pass for this one's.
	nextCommit   int64
	commitsAcked int
}

func newLoadRun(firstCommit int64) *loadRun {
	return &loadRun{acked: map[string]recordPos{}, commits: map[int32][2]int64{}, nextCommit: firstCommit}
}

// TestKillDuringProduceAndCommit runs the real binary, SIGKILLs it while
// franz-go producers send with acks=all and a group commits offsets (one
// synchronous commit every commitEvery, offsets increasing across rounds),
// and restarts it on the same data dir, round after round: every record
// ever acknowledged is present exactly once at its acknowledged offset, and
// the last acknowledged commit is present (D1, D2, O1). Each round is
// killed at a random moment after a minimum of work: a random number of
// acknowledged records and at least minCommits acknowledged commits.
//
// What SIGKILL cannot show: the kernel's page cache survives the death of
// the process, so written-but-never-synced bytes are still there after the
// restart, and a missing fdatasync (or an index committed before the data
// it names is synced) goes unnoticed here. The crash tests (storage,
// resolver and test/crash_test.go), which drop everything unsynced at the
// moment of the crash, are the ones that prove durability.
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
	nextCommit := int64(1)
	for round := range rounds {
		run := newLoadRun(nextCommit)
		target := 100 + rng.IntN(900)
		run.load(t, p, round, target, randomDelay(rng), func() {
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
		nextCommit = run.nextCommit
		p = startBinary(t, dir)
		verifyAcked(t, p.addr, all)
		verifyCommits(t, p.addr, allCommits)
		t.Logf("round %d: %v after %d acknowledged records (%d in all) and %d acknowledged commits, verified",
			round, sig, len(run.acked), len(all), run.commitsAcked)
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
	allCommits := map[int32][2]int64{}
	nextCommit := int64(1)
	for round := range killRounds() {
		p := startBinary(t, dir, reuse...)
		if round > 0 {
			// Wait until a ledger is being written over a spare: spares
			// exist (retention trimmed), then one of those files is a
			// ledger's (a Roll took it). Files are told apart by inode:
			// retention keeps making new spares under the same names, so
			// counting them could wait for ever on a busy machine.
			// The first round creates the topic: franz-go's first batches
			// are large and each fills a ledger, so it rolls little.
			var spares map[uint64]bool
			produceUntil(t, p.addr, fmt.Sprintf("round%d-trim", round), all, func() bool {
				spares = spareInodes(t, dir)
				return len(spares) > 0
			})
			produceUntil(t, p.addr, fmt.Sprintf("round%d-reuse", round), all, func() bool { return segmentReuses(t, dir, spares) })
		}
		run := newLoadRun(nextCommit)
		run.load(t, p, round, 1000+rng.IntN(3000), randomDelay(rng), func() {
			p.cmd.Process.Kill()
			<-p.done
		})
		for v, pos := range run.acked {
			all[v] = pos
		}
		for part, c := range run.commits {
			allCommits[part] = c
		}
		nextCommit = run.nextCommit
		p = startBinary(t, dir)
		verifyAcked(t, p.addr, all)
		verifyCommits(t, p.addr, allCommits)
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

// spareInodes is the inodes of the spare files (storage I8) in a data
// directory.
func spareInodes(t *testing.T, dir string) map[uint64]bool {
	t.Helper()
	names, err := storage.SpareFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint64]bool{}
	for _, n := range names {
		if ino, ok := inodeOf(filepath.Join(dir, "segments", n)); ok {
			out[ino] = true
		}
	}
	return out
}

// segmentReuses reports whether a segment file that is not a spare has
// one of the inodes in spares: a ledger was opened over a spare.
func segmentReuses(t *testing.T, dir string, spares map[uint64]bool) bool {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "segments"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if filepath.Ext(e.Name()) != ".seg" {
			continue
		}
		if ino, ok := inodeOf(filepath.Join(dir, "segments", e.Name())); ok && spares[ino] {
			return true
		}
	}
	return false
}

// inodeOf is path's inode; false when the file is gone (a trim raced).
func inodeOf(path string) (uint64, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Ino, true
}

// randomDelay is how long a round goes on after its minimum of work
// before it is stopped, so that kills land at random points of the
// produce and commit pipelines rather than right after an acknowledgement.
func randomDelay(rng *rand.Rand) time.Duration {
	return time.Duration(rng.IntN(200)) * time.Millisecond
}

// load produces and commits until target records and minCommits commits
// are acknowledged, goes on for delay, then calls stop (which ends the
// process) and returns once every client callback is done. It fails the
// test if fewer than minCommits commits were acknowledged before stop.
func (run *loadRun) load(t *testing.T, p *proc, round, target int, delay time.Duration, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic(killTopic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(time.Millisecond), kgo.AllowAutoTopicCreation(),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.RecordDeliveryTimeout(5*time.Second),
		kgo.RetryTimeout(5*time.Second),
		// A bounded backlog: the load is still a full pipeline, but a
		// round that waits for its commits does not pile up a million
		// records for verifyAcked to read back.
		kgo.MaxBufferedRecords(2000))
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
	committed := make(chan struct{})
	var commitWG sync.WaitGroup
	commitWG.Go(func() { run.commitLoop(ctx, p.addr, committed) })
	for _, c := range []chan struct{}{reached, committed} {
		select {
		case <-c:
		case <-ctx.Done():
			run.mu.Lock()
			records, commits := len(run.acked), run.commitsAcked
			run.mu.Unlock()
			t.Fatalf("round %d: %d records and %d commits acknowledged before the deadline", round, records, commits)
		}
	}
	// The minimum of work is done; stop at a random moment after it. (A
	// deliberate random point in time, not a wait for a condition.)
	time.Sleep(delay)
	run.mu.Lock()
	commitsBefore := run.commitsAcked
	run.mu.Unlock()
	stop()
	if commitsBefore < minCommits {
		t.Fatalf("round %d: only %d commits acknowledged before the stop, want >= %d", round, commitsBefore, minCommits)
	}
	cancel()
	commitWG.Wait()
	cl.Close()
	inflight.Wait()
}

// commitLoop commits, for every partition, one offset every commitEvery
// (each commit synchronous, the offset one more than the last; any
// increasing number will do) as a simple (memberless) group, until ctx
// ends. It closes committed once minCommits were acknowledged.
func (run *loadRun) commitLoop(ctx context.Context, addr string, committed chan struct{}) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryTimeout(time.Second))
	if err != nil {
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	tick := time.NewTicker(commitEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		run.mu.Lock()
		off := run.nextCommit
		run.nextCommit++
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
		run.commitsAcked++
		if run.commitsAcked == minCommits {
			close(committed)
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
