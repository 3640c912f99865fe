package test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"maps"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/server"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/storage/vfstest"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// crashIterations is how many machine crashes TestCrashProduceAndCommit
// injects: 500 by default (about 4 s per 100 on an idle machine),
// KGW_CRASH_ITERS to choose, 5000 under KGW_SOAK.
func crashIterations(t *testing.T) int {
	if s := os.Getenv("KGW_CRASH_ITERS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("KGW_CRASH_ITERS: %v", err)
		}
		return n
	}
	if os.Getenv("KGW_SOAK") != "" {
		return 5000
	}
	if testing.Short() {
		return 50
	}
	return 500
}

// TestCrashProduceAndCommit crashes the machine (vfstest.Machine: MemFS
// for the segment files, pebble's crashable FS for both the store's index
// and the offsets store) at a random instant or at a random step of a
// group commit, while idempotent and plain producers append through
// resolver.Produce and groups commit offsets, all concurrently. Each crash
// keeps a random share of the unsynced writes, maybe reordered, maybe with
// each file's last write torn. After reopening: every acknowledged batch
// is present exactly once at its acknowledged offset with its exact bytes
// (D1, D2), the log is dense and holds only whole batches that were
// produced (D3, D5: no partial entry), a new produce gets the next offset,
// a retry of each idempotent producer's last five batches is a duplicate
// at its offset (D4), and every acknowledged commit is present (O1).
// Seeds come from the clock; -crash.seed replays a run's crash choices.
func TestCrashProduceAndCommit(t *testing.T) {
	iters := crashIterations(t)
	start := time.Now()
	base := vfstest.Seed(t)
	var total crashTotals
	for i := range uint64(iters) {
		runCrashIteration(t, base+i, &total)
		if t.Failed() {
			t.Fatalf("failed at seed %d (replay: -crash.seed=%d)", base+i, base)
		}
	}
	t.Logf("%d crashes in %v (%d at a commit step): %d acknowledged batches and %d acknowledged commits checked, %d unacknowledged batches survived, %d torn tails truncated, %d idempotent retries deduplicated",
		iters, time.Since(start).Round(time.Millisecond), total.points, total.batches, total.commits, total.extra, total.torn, total.retries)
	if iters >= 50 && (total.points == 0 || total.extra == 0 || total.torn == 0 || total.retries == 0) {
		t.Errorf("coverage: want crashes at commit steps, unacknowledged survivors, torn tails and retries, each at least once")
	}
}

type crashTotals struct{ batches, commits, extra, points, torn, retries int }

const (
	crashTopic      = "crash"
	crashPartitions = 2
	crashProducers  = 4 // even: idempotent, odd: plain
	crashCommitters = 2
	crashPerWriter  = 40
)

// ackedBatch is one produce the resolver acknowledged.
type ackedBatch struct {
	partition int32
	offset    resolver.Offset
}

// crashState is what the writers acknowledged, frozen at the crash.
type crashState struct {
	mu      sync.Mutex
	stopped bool
	batches map[string]ackedBatch // content id -> where it was acknowledged
	// sent is every batch ever handed to Produce (content id -> bytes).
	sent map[string][]byte
	// committed[key] = [last acknowledged, last attempted] offsets.
	committed map[commitKey][2]int64
}

type commitKey struct {
	group     string
	partition int32
}

func runCrashIteration(t *testing.T, seed uint64, total *crashTotals) {
	rng := rand.New(rand.NewPCG(seed, 6))
	m := vfstest.NewMachine(1) // + the offsets store's pebble
	s := openCrashServer(t, seed, crashFS{m.Files, m.Index, m.Others[0]}, nil)
	r, offs := s.Resolver(), s.Offsets()
	if _, err := r.CreateTopic(crashTopic, crashPartitions, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	cs := &crashState{batches: map[string]ackedBatch{}, sent: map[string][]byte{}, committed: map[commitKey][2]int64{}}
	events := make(chan struct{}, crashProducers*crashPerWriter+crashCommitters*crashPerWriter)
	var wg sync.WaitGroup
	for p := range crashProducers {
		wg.Go(func() { crashProducer(t, r, cs, p, events) })
	}
	for c := range crashCommitters {
		wg.Go(func() { crashCommitter(t, offs, cs, c, events) })
	}
	crashAfter := rng.IntN(cap(events))
	for range crashAfter {
		<-events
	}
	// Freeze what was acknowledged, then crash, before anything else is
	// acknowledged: now (pebble's clones first), or at a random step of a
	// later group commit (either order; vfstest's crash.go).
	var (
		acked   map[string]ackedBatch
		commits map[commitKey][2]int64
		img     vfstest.Image
	)
	keep := vfstest.RandomKeep(rand.New(rand.NewPCG(seed, 7)))
	crash := func(order vfstest.Order) {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		cs.stopped = true
		acked = maps.Clone(cs.batches)
		commits = maps.Clone(cs.committed)
		img = m.Crash(order, keep)
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	if rng.IntN(2) == 0 {
		fired := make(chan struct{})
		point, order := vfstest.Points[rng.IntN(len(vfstest.Points))], vfstest.Orders[rng.IntN(2)]
		m.At(point, 1+rng.IntN(3), func() { crash(order); close(fired) })
		select {
		case <-fired:
			total.points++
		case <-finished: // every writer finished first
			crash(vfstest.PebbleFirst)
		}
		m.Disarm()
	} else {
		crash(vfstest.PebbleFirst)
	}
	<-finished
	s.Close()

	core, obs := observer.New(zapcore.WarnLevel)
	s2 := openCrashServer(t, seed, crashFS{img.Files, img.Index, img.Others[0]}, zap.New(core))
	defer s2.Close()
	total.torn += obs.FilterMessage("storage-torn-tail-truncated").Len()
	r2, offs2 := s2.Resolver(), s2.Offsets()
	found := checkCrashLog(t, seed, r2, cs.sent, acked)
	total.extra += len(found) - len(acked)
	total.batches += len(acked)
	total.retries += retryIdempotent(t, seed, r2, found)
	checkCrashCommits(t, seed, offs2, commits)
	total.commits += len(commits)
}

// crashFS is one machine's disks, or a crash image of them.
type crashFS struct {
	files        storage.FS
	index, group vfs.FS // the store's and the offsets store's pebble
}

// openCrashServer opens the server's layers (no listener) over fs.
func openCrashServer(t *testing.T, seed uint64, fs crashFS, log *zap.Logger) *server.Server {
	t.Helper()
	s, err := server.Open(server.Config{DataDir: "/data", Logger: log,
		Storage:  storage.Options{FS: fs.files, PebbleFS: fs.index},
		Offsets:  offsets.Options{PebbleFS: fs.group},
		Resolver: resolver.Config{RetentionCheckInterval: -1}})
	if err != nil {
		t.Fatalf("seed %d: open server: %v", seed, err)
	}
	return s
}

// retryIdempotent retries each idempotent producer's last five batches in
// the log (Kafka's in-flight window): each is a duplicate at the offset it
// has (D4). It returns how many it retried.
func retryIdempotent(t *testing.T, seed uint64, r *resolver.Resolver, found map[string]ackedBatch) int {
	t.Helper()
	retried := 0
	for p := 0; p < crashProducers; p += 2 {
		last := -1
		for i := range crashPerWriter {
			if _, ok := found[fmt.Sprintf("p%d-b%d", p, i)]; ok {
				last = i
			}
		}
		for i := max(0, last-4); i <= last && last >= 0; i++ {
			id, batch := crashBatch(p, i)
			want := found[id]
			res, err := r.Produce(crashTopic, want.partition, batch)
			if err != nil || !res.Duplicate || res.BaseOffset != want.offset {
				t.Fatalf("seed %d: retry of %s (at %d/%d): %+v %v", seed, id, want.partition, want.offset, res, err)
			}
			retried++
		}
	}
	return retried
}

// crashBatch is producer p's i-th batch: records whose values name it, so
// that every batch's bytes are unique.
func crashBatch(p, i int) (id string, batch []byte) {
	id = fmt.Sprintf("p%d-b%d", p, i)
	n := 1 + i%3
	var recs []byte
	for j := range n {
		r := kmsg.Record{OffsetDelta: int32(j), TimestampDelta64: int64(j),
			Value: fmt.Appendf(nil, "%s-r%d-%s", id, j, bytes.Repeat([]byte{'x'}, i%7*50))}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: int32(n - 1), FirstTimestamp: 1000 + int64(i),
		MaxTimestamp: 1000 + int64(i+n-1), ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(n), Records: recs, PartitionLeaderEpoch: -1}
	if p%2 == 0 { // idempotent: producer id p, sequence = records so far
		b.ProducerID, b.ProducerEpoch, b.FirstSequence = int64(p), 0, int32(seqBefore(i))
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return id, raw
}

// seqBefore is the number of records in batches 0..i-1 (batch i has 1+i%3).
func seqBefore(i int) int {
	n := 0
	for j := range i {
		n += 1 + j%3
	}
	return n
}

func crashProducer(t *testing.T, r *resolver.Resolver, cs *crashState, p int, events chan<- struct{}) {
	part := int32(p % crashPartitions)
	for i := range crashPerWriter {
		id, batch := crashBatch(p, i)
		cs.mu.Lock()
		if cs.stopped {
			cs.mu.Unlock()
			return
		}
		cs.sent[id] = batch
		cs.mu.Unlock()
		res, err := r.Produce(crashTopic, part, append([]byte(nil), batch...))
		cs.mu.Lock()
		if cs.stopped {
			cs.mu.Unlock()
			return
		}
		if err != nil {
			cs.mu.Unlock()
			t.Errorf("producer %d batch %d: %v", p, i, err)
			return
		}
		cs.batches[id] = ackedBatch{part, res.BaseOffset}
		cs.mu.Unlock()
		events <- struct{}{}
	}
}

func crashCommitter(t *testing.T, offs *offsets.Store, cs *crashState, c int, events chan<- struct{}) {
	group := fmt.Sprintf("g%d", c)
	for i := range crashPerWriter {
		off := int64(10*i + c)
		var batch []offsets.Commit
		cs.mu.Lock()
		if cs.stopped {
			cs.mu.Unlock()
			return
		}
		for p := range int32(crashPartitions) {
			k := commitKey{group, p}
			v := cs.committed[k]
			if i == 0 {
				v[0] = -1
			}
			v[1] = off
			cs.committed[k] = v
			batch = append(batch, offsets.Commit{TopicPartition: offsets.TopicPartition{Topic: crashTopic, Partition: p},
				Offset: offsets.Offset(off), LeaderEpoch: -1})
		}
		cs.mu.Unlock()
		err := offs.Commit(group, batch)
		cs.mu.Lock()
		if cs.stopped {
			cs.mu.Unlock()
			return
		}
		if err != nil {
			cs.mu.Unlock()
			t.Errorf("committer %d commit %d: %v", c, i, err)
			return
		}
		for p := range int32(crashPartitions) {
			k := commitKey{group, p}
			v := cs.committed[k]
			v[0] = off
			cs.committed[k] = v
		}
		cs.mu.Unlock()
		events <- struct{}{}
	}
}

// checkCrashLog reads every partition whole and returns where each batch
// in it is.
func checkCrashLog(t *testing.T, seed uint64, r *resolver.Resolver, sent map[string][]byte, acked map[string]ackedBatch) map[string]ackedBatch {
	t.Helper()
	byContent := make(map[string]string, len(sent)) // bytes from magic on -> id
	for id, b := range sent {
		byContent[string(b[16:])] = id
	}
	found := map[string]ackedBatch{}
	for part := range int32(crashPartitions) {
		start, hwm, _, err := r.Bounds(crashTopic, part)
		if err != nil || start != 0 {
			t.Fatalf("seed %d: partition %d bounds [%d, %d): %v", seed, part, start, hwm, err)
		}
		for off := resolver.Offset(0); off < hwm; {
			res, err := r.Fetch(crashTopic, part, off, 1<<20, true, resolver.ReadUncommitted)
			if err != nil || len(res.Batches) == 0 {
				t.Fatalf("seed %d: partition %d fetch @%d (hwm %d): %d batches, %v", seed, part, off, hwm, len(res.Batches), err)
			}
			for _, b := range res.Batches {
				base := resolver.Offset(binary.BigEndian.Uint64(b))
				id, ok := byContent[string(b[16:])]
				if !ok || base != off {
					t.Fatalf("seed %d: partition %d: batch at %d (want %d) known %v: not a whole produced batch", seed, part, base, off, ok)
				}
				if prev, dup := found[id]; dup {
					t.Fatalf("seed %d: batch %s at %d/%d and again at %d/%d", seed, id, prev.partition, prev.offset, part, off)
				}
				found[id] = ackedBatch{part, off}
				off += resolver.Offset(binary.BigEndian.Uint32(b[57:]))
			}
		}
		// Dense after reopen: the next produce gets the high watermark.
		_, batch := crashBatch(99, 0)
		if res, err := r.Produce(crashTopic, part, batch); err != nil || res.BaseOffset != hwm {
			t.Fatalf("seed %d: partition %d: produce after reopen at %d, want %d: %v", seed, part, res.BaseOffset, hwm, err)
		}
	}
	for id, want := range acked {
		if got, ok := found[id]; !ok || got != want {
			t.Fatalf("seed %d: acknowledged %s at %d/%d: found %v at %d/%d", seed, id, want.partition, want.offset, ok, got.partition, got.offset)
		}
	}
	return found
}

func checkCrashCommits(t *testing.T, seed uint64, offs *offsets.Store, commits map[commitKey][2]int64) {
	t.Helper()
	for k, v := range commits {
		c, ok, err := offs.Get(k.group, offsets.TopicPartition{Topic: crashTopic, Partition: k.partition})
		if err != nil {
			t.Fatalf("seed %d: get %v: %v", seed, k, err)
		}
		lastAcked, lastTried := v[0], v[1]
		switch {
		case lastAcked < 0 && !ok:
		case !ok:
			t.Fatalf("seed %d: %v: acknowledged commit %d lost", seed, k, lastAcked)
		case int64(c.Offset) < lastAcked || int64(c.Offset) > lastTried:
			t.Fatalf("seed %d: %v at %d: acknowledged %d, last tried %d", seed, k, c.Offset, lastAcked, lastTried)
		}
	}
}
