package test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/kafka/txn"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/server"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/storage/vfstest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestCrashTransactionsEndToEnd crashes the machine (vfstest: unsynced
// writes lost, tails torn; the offsets store's pebble crashes with the
// index) at a random commit step while franz-go transactional
// producers run transactions end to end: records on two partitions,
// AddOffsetsToTxn and TxnOffsetCommit (but for the last producer, whose
// transactions carry no offsets), then EndTxn (commit or abort),
// concurrently. EndTxn answers before the markers and the Complete state
// (with the offsets) are written (answer once decided), so a crash can
// come after an answer and before the offsets are committed. After reopening the image and letting each producer
// restart (InitProducerId, which aborts what was left open) (durable partition adds, completion at open,
// O6, D2):
//   - every transaction is atomic across its partitions and its offsets:
//     a producer's transactions visible to read_committed are the same on
//     both partitions, and its group's committed offset is exactly that
//     of the last visible one;
//   - no acknowledged commit is lost, and no acknowledged abort is
//     visible;
//   - each partition's LSO right after reopening is at least any LSO read
//     before the crash.
func TestCrashTransactionsEndToEnd(t *testing.T) {
	iters := max(crashIterations(t)/5, 4)
	base := vfstest.Seed(t)
	var total txnCrashTotals
	for i := range uint64(iters) {
		runTxnCrashIteration(t, base+i, &total)
		if t.Failed() {
			t.Fatalf("failed at seed %d (replay: -crash.seed=%d)", base+i, base)
		}
	}
	t.Logf("%d crashes (%d at a commit step): %d acknowledged commits, %d acknowledged aborts, %d transactions left open, %d decided but unacknowledged",
		iters, total.points, total.commits, total.aborts, total.open, total.unacked)
	if total.commits == 0 || total.aborts == 0 {
		t.Error("coverage: want acknowledged commits and aborts")
	}
}

type txnCrashTotals struct{ points, commits, aborts, open, unacked int }

const (
	txnCrashTopic     = "ctx"
	txnCrashProducers = 3
	txnCrashPerWriter = 12
)

// txnCrashState is what the producers had acknowledged, frozen at the crash.
type txnCrashState struct {
	mu      sync.Mutex
	stopped bool
	ended   map[[2]int]bool // (producer, seq) -> committed, for acknowledged EndTxn
	lso     [2]int64        // the highest LSO read per partition
}

func (cs *txnCrashState) record(f func()) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if !cs.stopped {
		f()
	}
}

func runTxnCrashIteration(t *testing.T, seed uint64, total *txnCrashTotals) {
	rng := rand.New(rand.NewPCG(seed, 16))
	m := vfstest.NewMachine(1)
	s := openTxnCrashServer(t, seed, crashFS{m.Files, m.Index, m.Others[0]})
	if _, err := s.Resolver().CreateTopic(txnCrashTopic, 2, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr().String()
	cs := &txnCrashState{ended: map[[2]int]bool{}}
	events := make(chan struct{}, txnCrashProducers*txnCrashPerWriter)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for p := range txnCrashProducers {
		wg.Go(func() { txnCrashProducer(ctx, t, addr, cs, p, events) })
	}
	lsoDone := make(chan struct{})
	go func() { defer close(lsoDone); watchLSO(ctx, addr, cs) }()

	for range rng.IntN(cap(events)) {
		<-events
	}
	var (
		ended map[[2]int]bool
		lso   [2]int64
		img   vfstest.Image
	)
	keep := vfstest.RandomKeep(rand.New(rand.NewPCG(seed, 17)))
	crash := func(order vfstest.Order) {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		cs.stopped = true
		ended, lso = maps.Clone(cs.ended), cs.lso
		img = m.Crash(order, keep)
	}
	// The crash is taken at a step of the storage's group commit, with
	// the committer held, and the segment files are cloned before the
	// pebble instances: nothing becomes durable in the files or the index
	// meanwhile, while the offsets store, which is not held, may only move
	// ahead of them (a transaction's state is written before its data and
	// its markers are durable before its completion). Cloning pebble first
	// could keep an unsynced frame written after the clone of the state
	// that allowed it: an image no real crash leaves.
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	fired := make(chan struct{})
	m.At(vfstest.Points[rng.IntN(len(vfstest.Points))], 1+rng.IntN(3), func() { crash(vfstest.FilesFirst); close(fired) })
	select {
	case <-fired:
		total.points++
	case <-finished: // every producer finished first: nothing moves
		crash(vfstest.FilesFirst)
	}
	m.Disarm()
	cancel()
	<-finished
	<-lsoDone
	s.Close()

	s2 := openTxnCrashServer(t, seed, crashFS{img.Files, img.Index, img.Others[0]})
	defer s2.Close()
	checkTxnCrash(t, seed, s2, ended, lso, total)
}

// openTxnCrashServer opens a server with a listener over fs.
func openTxnCrashServer(t *testing.T, seed uint64, fs crashFS) *server.Server {
	t.Helper()
	s, err := server.Open(server.Config{DataDir: "/data", Listen: "127.0.0.1:0",
		Storage:  storage.Options{FS: fs.files, PebbleFS: fs.index},
		Offsets:  offsets.Options{PebbleFS: fs.group},
		Resolver: resolver.Config{RetentionCheckInterval: -1},
		// Only recovery at open may complete what the crash left decided
		// (completion at open): the retry loop would hide its absence.
		Kafka: kafka.Config{Txn: txn.Config{AbortTimedOutInterval: time.Hour}}})
	if err != nil {
		t.Fatalf("seed %d: open server: %v", seed, err)
	}
	go s.Serve()
	return s
}

func txnCrashID(p int) string    { return fmt.Sprintf("ctx-%d", p) }
func txnCrashGroup(p int) string { return fmt.Sprintf("g-%d", p) }

// txnCrashProducer runs transactions until the crash: two records on each
// partition, the offset seq+1 committed for its group (not by the last
// producer: txnCrashOffsets), and every third transaction aborted.
func txnCrashProducer(ctx context.Context, t *testing.T, addr string, cs *txnCrashState, p int, events chan<- struct{}) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID(txnCrashID(p)),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(time.Minute))
	if err != nil {
		t.Error(err)
		return
	}
	defer cl.Close()
	for seq := range txnCrashPerWriter {
		commit := seq%3 != 2
		if err := txnCrashOne(ctx, cl, p, seq, commit, txnCrashOffsets(p)); err != nil {
			if ctx.Err() == nil {
				t.Errorf("producer %d txn %d: %v", p, seq, err)
			}
			return
		}
		cs.record(func() { cs.ended[[2]int{p, seq}] = commit })
		select {
		case events <- struct{}{}:
		case <-ctx.Done():
			return
		}
	}
}

// txnCrashOffsets tells whether producer p's transactions commit offsets.
func txnCrashOffsets(p int) bool { return p != txnCrashProducers-1 }

func txnCrashOne(ctx context.Context, cl *kgo.Client, p, seq int, commit, withOffsets bool) error {
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	var rs []*kgo.Record
	for part := range int32(2) {
		for i := range 2 {
			rs = append(rs, &kgo.Record{Topic: txnCrashTopic, Partition: part, Value: fmt.Appendf(nil, "%d/%d/%d", p, seq, i)})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return err
	}
	if !withOffsets {
		return cl.EndTransaction(ctx, kgo.TransactionEndTry(commit))
	}
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return err
	}
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = txnCrashID(p), pid, epoch, txnCrashGroup(p)
	aoResp, err := ao.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(aoResp.ErrorCode)
	}
	if err != nil {
		return fmt.Errorf("add offsets: %w", err)
	}
	tc := kmsg.NewPtrTxnOffsetCommitRequest()
	tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch = txnCrashID(p), txnCrashGroup(p), pid, epoch
	tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: txnCrashTopic, Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: int64(seq + 1), LeaderEpoch: -1}}}}
	ts, err := kadm.NewClient(cl).ListTopics(ctx, txnCrashTopic) // v6 names the topic by id
	if err != nil {
		return fmt.Errorf("topic id: %w", err)
	}
	tc.Topics[0].TopicID = ts[txnCrashTopic].ID
	tcResp, err := tc.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(tcResp.Topics[0].Partitions[0].ErrorCode)
	}
	if err != nil {
		return fmt.Errorf("txn offset commit: %w", err)
	}
	return cl.EndTransaction(ctx, kgo.TransactionEndTry(commit))
}

// watchLSO records the highest LSO read per partition until ctx ends.
func watchLSO(ctx context.Context, addr string, cs *txnCrashState) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for ctx.Err() == nil {
		lso, err := adm.ListCommittedOffsets(ctx, txnCrashTopic)
		if err == nil && lso.Error() == nil {
			cs.record(func() {
				for part := range int32(2) {
					cs.lso[part] = max(cs.lso[part], lso[txnCrashTopic][part].Offset)
				}
			})
		}
	}
}

// checkTxnCrash checks the reopened image (see TestCrashTransactionsEndToEnd).
func checkTxnCrash(t *testing.T, seed uint64, s *server.Server, ended map[[2]int]bool, lsoBefore [2]int64, total *txnCrashTotals) {
	addr := s.Addr().String()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testCtx(t)
	adm := kadm.NewClient(cl)
	lso, err := adm.ListCommittedOffsets(ctx, txnCrashTopic)
	if err != nil || lso.Error() != nil {
		t.Fatalf("seed %d: LSO after reopen: %v %v", seed, err, lso.Error())
	}
	for part := range int32(2) {
		if got := lso[txnCrashTopic][part].Offset; got < lsoBefore[part] {
			t.Errorf("seed %d: partition %d LSO went back from %d to %d", seed, part, lsoBefore[part], got)
		}
	}
	for p := range txnCrashProducers {
		if restartProducer(t, ctx, cl, txnCrashID(p)) {
			total.open++
		}
	}
	checkNoOpenTxn(t, seed, ctx, adm, txnCrashTopic)
	visible := readCommittedTxns(t, ctx, addr)
	for p := range txnCrashProducers {
		checkProducerAtomic(t, seed, s, p, visible, ended)
	}
	for _, commit := range ended {
		if commit {
			total.commits++
		} else {
			total.aborts++
		}
	}
	for key := range visible {
		if _, ok := ended[[2]int{key.p, key.seq}]; !ok {
			total.unacked++
		}
	}
}

// restartProducer does what a restarted producer does first: InitProducerId
// with its transactional id, retried once after the coordinator aborted
// what was left open (CONCURRENT_TRANSACTIONS; the abort completes before
// that answer, the InitProducerId bump). It reports whether there was.
func restartProducer(t *testing.T, ctx context.Context, cl *kgo.Client, id string) bool {
	aborted := false
	for range 2 {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(id), 60000
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("init %s: %v", id, err)
		}
		switch err := kerr.ErrorForCode(resp.ErrorCode); {
		case err == nil:
			return aborted
		case errors.Is(err, kerr.ConcurrentTransactions):
			aborted = true
		default:
			t.Fatalf("init %s: %v", id, err)
		}
	}
	t.Fatalf("init %s: still CONCURRENT_TRANSACTIONS after its abort: a decided transaction was not completed at open", id)
	return aborted
}

// txnRecord names a transaction's records on one partition.
type txnRecord struct{ p, seq int }

// readCommittedTxns reads both partitions under read_committed to their
// end and counts each transaction's records per partition.
func readCommittedTxns(t *testing.T, ctx context.Context, addr string) map[txnRecord][2]int {
	g := &gateway{t: t, addr: addr}
	out := map[txnRecord][2]int{}
	for _, v := range consumeAll(t, g, txnCrashTopic, true) {
		var part, p, seq, i int
		if _, err := fmt.Sscanf(v, "%d/%d/%d/%d", &part, &p, &seq, &i); err != nil {
			t.Fatalf("record %q: %v", v, err)
		}
		c := out[txnRecord{p, seq}]
		c[part]++
		out[txnRecord{p, seq}] = c
	}
	return out
}

// checkProducerAtomic checks one producer's transactions and its group's
// committed offset.
func checkProducerAtomic(t *testing.T, seed uint64, s *server.Server, p int, visible map[txnRecord][2]int, ended map[[2]int]bool) {
	last := -1
	for seq := range txnCrashPerWriter {
		c, seen := visible[txnRecord{p, seq}]
		if seen && c != [2]int{2, 2} {
			t.Errorf("seed %d: producer %d txn %d: %v records per partition, want 2 on each", seed, p, seq, c)
		}
		commit, acked := ended[[2]int{p, seq}]
		switch {
		case acked && commit && !seen:
			t.Errorf("seed %d: producer %d txn %d: acknowledged commit lost", seed, p, seq)
		case acked && !commit && seen:
			t.Errorf("seed %d: producer %d txn %d: acknowledged abort visible", seed, p, seq)
		}
		if seen {
			last = seq
		}
	}
	c, ok, err := s.Offsets().Get(txnCrashGroup(p), offsets.TopicPartition{Topic: txnCrashTopic, Partition: 0})
	switch {
	case err != nil:
		t.Fatalf("seed %d: offsets: %v", seed, err)
	case !txnCrashOffsets(p) && ok:
		t.Errorf("seed %d: producer %d: offset %d committed by transactions without offsets", seed, p, c.Offset)
	case !txnCrashOffsets(p):
	case last < 0 && ok:
		t.Errorf("seed %d: producer %d: offset %d committed without a visible transaction", seed, p, c.Offset)
	case last >= 0 && (!ok || int(c.Offset) != last+1):
		t.Errorf("seed %d: producer %d: committed offset %v (present %v), want %d (its last visible transaction)", seed, p, c.Offset, ok, last+1)
	}
	if pend, _ := s.Offsets().PendingPartitions(txnCrashGroup(p)); len(pend) != 0 {
		t.Errorf("seed %d: producer %d: offsets still pending after its restart: %v", seed, p, pend)
	}
}

// checkNoOpenTxn fails when a partition of topic still has an open
// transaction (its LSO below its high watermark) once every producer has
// restarted, naming the open transactions and the coordinator's view.
func checkNoOpenTxn(t *testing.T, seed uint64, ctx context.Context, adm *kadm.Client, topic string) {
	t.Helper()
	lso, err1 := adm.ListCommittedOffsets(ctx, topic)
	hwm, err2 := adm.ListEndOffsets(ctx, topic)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatalf("seed %d: offsets: %v", seed, err)
	}
	stuck := false
	lso.Each(func(o kadm.ListedOffset) {
		if h, _ := hwm.Lookup(topic, o.Partition); o.Offset != h.Offset {
			stuck = true
			t.Errorf("seed %d: %s/%d: LSO %d below the high watermark %d after every producer restarted", seed, topic, o.Partition, o.Offset, h.Offset)
		}
	})
	if !stuck {
		return
	}
	producers, err := adm.DescribeProducers(ctx, kadm.TopicsSet{topic: {0: {}, 1: {}}})
	t.Logf("producers: %+v (%v)", producers, err)
	txns, err := adm.ListTransactions(ctx, nil, nil)
	t.Logf("transactions: %+v (%v)", txns, err)
	for id := range txns {
		d, err := adm.DescribeTransactions(ctx, id)
		t.Logf("%s: %+v (%v)", id, d[id], err)
	}
	t.FailNow()
}
