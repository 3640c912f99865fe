package resolver

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// TestCrashTransactions crashes the machine (vfstest.Machine: unsynced
// writes lost, tails torn) at random instants and commit steps while
// producers run transactions over two partitions: transactional batches,
// then the decision, then markers on both partitions. After reopen (the LSO,
// the aborted-transaction index, transaction recovery, D2):
//   - every acknowledged batch is at its acknowledged offset;
//   - each partition's LSO is at least any LSO read before the crash;
//   - read_committed delivers no batch of an aborted or undecided
//     transaction;
//   - after the coordinator's recovery (markers re-sent for decided
//     transactions, which must be idempotent, and undecided ones aborted)
//     the LSO reaches the end, and read_committed delivers exactly the
//     committed transactions' batches, also after one more restart.
func TestCrashTransactions(t *testing.T) {
	seeds := 10
	if testing.Short() {
		seeds = 3
	}
	base := vfstest.Seed(t)
	var stats txnCrashStats
	for i := range uint64(seeds) {
		runTxnCrash(t, base+i, &stats)
		if t.Failed() {
			t.Fatalf("failed at seed %d (replay: -crash.seed=%d)", base+i, base)
		}
	}
	t.Logf("%d crashes: %d at a commit step, %d with a transaction left open, %d with transaction state checkpointed",
		seeds, stats.points, stats.open, stats.checkpointed)
	if !testing.Short() && stats.open == 0 {
		t.Fatal("no crash left a transaction open")
	}
}

// txnCrashStats shows what the crashes covered.
type txnCrashStats struct{ points, open, checkpointed int }

// crashTxn is one transaction as its producer and coordinator know it.
type crashTxn struct {
	pid     int64
	batches [2][]batchKey // acknowledged, per partition
	offsets [2][]Offset
	// decided: 0 undecided, 1 commit, 2 abort (the coordinator's durable
	// PrepareCommit/PrepareAbort, made before any marker is written).
	decided int
	marked  [2]bool // marker acknowledged
}

type txnCrashRun struct {
	mu       sync.Mutex
	stop     bool
	txns     []*crashTxn
	maxLSO   [2]Offset
	atCrash  []crashTxn
	lsoCrash [2]Offset
}

func (c *txnCrashRun) freeze() {
	c.stop = true
	c.atCrash = c.atCrash[:0]
	for _, x := range c.txns {
		c.atCrash = append(c.atCrash, *x)
	}
	c.lsoCrash = c.maxLSO
}

func runTxnCrash(t *testing.T, seed uint64, stats *txnCrashStats) {
	rng := rand.New(rand.NewPCG(seed, 21))
	m := vfstest.NewMachine(0)
	const dir = "/data"
	st, err := storage.Open(dir, storage.Options{FS: m.Files, PebbleFS: m.Index})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(st, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CreateTopic("t", 2, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	c := &txnCrashRun{}
	acks := make(chan struct{}, 1<<14)
	var wg sync.WaitGroup
	const producers, perProducer = 3, 40
	for pid := range int64(producers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.txnProducer(t, r, pid, perProducer, seed, acks)
		}()
	}
	watchDone := make(chan struct{})
	go func() { // reads the LSOs a consumer could have seen
		defer close(watchDone)
		for {
			for part := range int32(2) {
				_, _, lso, err := r.Bounds("t", part)
				c.mu.Lock()
				if c.stop {
					c.mu.Unlock()
					return
				}
				if err == nil {
					c.maxLSO[part] = max(c.maxLSO[part], lso)
				}
				c.mu.Unlock()
			}
		}
	}()
	for range 1 + rng.IntN(producers*perProducer*4) {
		waitSignal(t, acks, "an acknowledgement")
	}
	keep := vfstest.RandomKeep(rand.New(rand.NewPCG(seed, 22)))
	var img vfstest.Image
	crash := func(order vfstest.Order) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.freeze()
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
			stats.points++
		case <-finished:
			crash(vfstest.PebbleFirst)
		}
		m.Disarm()
	} else {
		crash(vfstest.PebbleFirst)
	}
	<-finished
	<-watchDone
	r.Close()
	st.Close()

	core, logs := observer.New(zapcore.WarnLevel)
	st2, err := storage.Open(dir, storage.Options{FS: img.Files, PebbleFS: img.Index})
	if err != nil {
		t.Fatalf("seed %d: reopen store: %v", seed, err)
	}
	defer st2.Close()
	// Whether a checkpoint before the crash wrote transaction state.
	for _, prefix := range [][]byte{prefixTxnOpen, prefixAborted} {
		if err := st2.ScanMeta(prefix, func(_, _ []byte) error { return errStop }); errors.Is(err, errStop) {
			stats.checkpointed++
			break
		}
	}
	r2, err := Open(st2, Config{Logger: zap.New(core)})
	if err != nil {
		t.Fatalf("seed %d: reopen resolver: %v", seed, err)
	}
	if n := logs.Len(); n != 0 {
		t.Fatalf("seed %d: recovery warned: %v", seed, logs.All()[0].Message)
	}
	for part := range int32(2) {
		if _, hwm, lso, _ := r2.Bounds("t", part); lso < hwm {
			stats.open++
			break
		}
	}
	checkTxnCrash(t, seed, r2, c)
	r2.Close()
	// Once more, cleanly: the recovered state was checkpointed exactly.
	r3, err := Open(st2, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Close()
	checkCommitted(t, seed, r3, c, "after a second open")
}

var errStop = errors.New("stop")

// txnProducer runs one producer's transactions until the run stops.
func (c *txnCrashRun) txnProducer(t *testing.T, r *Resolver, pid int64, n int, seed uint64, acks chan<- struct{}) {
	rng := rand.New(rand.NewPCG(seed, uint64(pid)+100))
	seq := [2]int32{}
	ack := func(err error, what string) bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if err != nil && !c.stop {
			t.Errorf("seed %d: producer %d: %s: %v", seed, pid, what, err)
		}
		if err != nil || c.stop {
			return false
		}
		acks <- struct{}{}
		return true
	}
	for range n {
		x := &crashTxn{pid: pid}
		c.mu.Lock()
		c.txns = append(c.txns, x)
		c.mu.Unlock()
		for part := range int32(2) {
			if !ack(r.AddTxnPartition("t", part, pid, 0), "register") {
				return
			}
			for range 1 + rng.IntN(2) {
				k := 1 + rng.IntN(3)
				res, err := r.Produce("t", part, txnBatch(pid, 0, seq[part], k).encode())
				if !ack(err, "produce") {
					return
				}
				c.mu.Lock()
				x.batches[part] = append(x.batches[part], batchKey{pid, int64(seq[part])})
				x.offsets[part] = append(x.offsets[part], res.BaseOffset)
				c.mu.Unlock()
				seq[part] += int32(k)
			}
		}
		decision := 1 + rng.IntN(2)
		c.mu.Lock()
		if c.stop {
			c.mu.Unlock()
			return
		}
		x.decided = decision
		c.mu.Unlock()
		for part := range int32(2) {
			if !ack(r.WriteTxnMarker("t", part, pid, 0, decision == 1, 0), "marker") {
				return
			}
			c.mu.Lock()
			x.marked[part] = true
			c.mu.Unlock()
		}
	}
}

func checkTxnCrash(t *testing.T, seed uint64, r *Resolver, c *txnCrashRun) {
	t.Helper()
	committed := map[batchKey]bool{} // by (pid, seq) per partition below
	for part := range int32(2) {
		// D2: every acknowledged batch is at its acknowledged offset.
		inLog := map[batchKey]Offset{}
		_, hwm, lso, err := r.Bounds("t", part)
		if err != nil {
			t.Fatal(err)
		}
		for off := Offset(0); off < hwm; {
			res, err := r.Fetch("t", part, off, 1<<20, true, ReadUncommitted)
			if err != nil || len(res.Batches) == 0 {
				t.Fatalf("seed %d: fetch %d@%d: %v", seed, part, off, err)
			}
			for _, b := range res.Batches {
				h := decodeHeader(b)
				if !h.Control() {
					inLog[batchKey{h.ProducerID, int64(h.BaseSequence)}] = h.BaseOffset
				}
				off = h.BaseOffset + Offset(h.Records)
			}
		}
		for _, x := range c.atCrash {
			for i, k := range x.batches[part] {
				if got, ok := inLog[k]; !ok || got != x.offsets[part][i] {
					t.Fatalf("seed %d: partition %d: acknowledged %v at %d, in log %v at %d", seed, part, k, x.offsets[part][i], ok, got)
				}
			}
		}
		// The LSO: the LSO did not move backwards.
		if lso < c.lsoCrash[part] {
			t.Fatalf("seed %d: partition %d: LSO %d after the crash, %d before (the LSO)", seed, part, lso, c.lsoCrash[part])
		}
		// The read_committed bound: nothing of an aborted or undecided transaction is visible.
		clear(committed)
		for _, x := range c.atCrash {
			if x.decided == 1 {
				for _, k := range x.batches[part] {
					committed[k] = true
				}
			}
		}
		got, _ := committedRead(t, r, "t", part, 1<<20)
		for _, k := range got {
			if !committed[k] {
				t.Fatalf("seed %d: partition %d: read_committed delivered %v of a transaction not committed", seed, part, k)
			}
		}
	}
	// The coordinator's recovery: each producer's last transaction (the
	// only one that can be unfinished; the coordinator keeps one per
	// transactional id) gets its markers again when decided, and is
	// aborted when not.
	last := map[int64]crashTxn{}
	for _, x := range c.atCrash {
		last[x.pid] = x
	}
	for _, x := range last {
		for part := range int32(2) {
			if err := r.WriteTxnMarker("t", part, x.pid, 0, x.decided == 1, 0); err != nil {
				t.Fatalf("seed %d: recovery marker: %v", seed, err)
			}
		}
	}
	checkCommitted(t, seed, r, c, "after recovery")
}

// checkCommitted: every transaction ended, read_committed delivers exactly
// the committed transactions' batches.
func checkCommitted(t *testing.T, seed uint64, r *Resolver, c *txnCrashRun, when string) {
	t.Helper()
	for part := range int32(2) {
		_, hwm, lso, _ := r.Bounds("t", part)
		if lso != hwm || lso < c.lsoCrash[part] {
			t.Fatalf("seed %d: %s: partition %d: LSO %d, end %d, before the crash %d", seed, when, part, lso, hwm, c.lsoCrash[part])
		}
		var want []batchKey
		for _, x := range c.atCrash {
			if x.decided == 1 {
				want = append(want, x.batches[part]...)
			}
		}
		got, _ := committedRead(t, r, "t", part, 1<<20)
		cmp := func(a, b batchKey) int { return int(a.pid-b.pid)*1_000_000 + int(a.seq-b.seq) }
		slices.SortFunc(got, cmp)
		slices.SortFunc(want, cmp)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: %s: partition %d: delivered %v\n want %v", seed, when, part, got, want)
		}
	}
}

// The LSO: while a marker is written but not yet durable (the group commit held
// at each of its steps before the index commit), the LSO stays at the
// transaction's first offset: a crash then would leave the transaction
// open, so no reader may have seen the LSO past it.
func TestTxnLSOHeldUntilMarkerDurable(t *testing.T) {
	for _, point := range []vfstest.Point{vfstest.AfterWrite, vfstest.SyncHeld, vfstest.AfterSync} {
		t.Run(point.String(), func(t *testing.T) {
			m := vfstest.NewMachine(0)
			st, err := storage.Open("/data", storage.Options{FS: m.Files, PebbleFS: m.Index})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			r, err := Open(st, Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.CreateTopic("t", 1, 1, nil, false); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Produce("t", 0, plain(1, 1).encode()); err != nil {
				t.Fatal(err)
			}
			if err := r.AddTxnPartition("t", 0, 1, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Produce("t", 0, txnBatch(1, 0, 0, 1).encode()); err != nil {
				t.Fatal(err)
			}
			reached, release := make(chan struct{}), make(chan struct{})
			m.At(point, 1, func() { close(reached); <-release })
			marked := make(chan error, 1)
			go func() { marked <- r.WriteTxnMarker("t", 0, 1, 0, false, 0) }()
			waitSignal(t, reached, "the marker's group commit")
			_, _, lso, err := r.Bounds("t", 0)
			res, ferr := r.Fetch("t", 0, 1, 1<<20, true, ReadCommitted)
			close(release)
			m.Disarm()
			if err != nil || ferr != nil || lso != 1 || res.LastStable != 1 || len(res.Batches) != 0 {
				t.Fatalf("marker not durable: LSO %d, fetch %+v (%v %v), want the LSO at 1", lso, res, err, ferr)
			}
			if err := <-marked; err != nil {
				t.Fatal(err)
			}
			if _, hwm, lso, _ := r.Bounds("t", 0); lso != 3 || hwm != 3 {
				t.Fatalf("marker durable: LSO %d end %d, want 3 3", lso, hwm)
			}
		})
	}
}
