package coord

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/kgateway/kgateway/cluster/etcdtest"
	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/offsets"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

const (
	prefix   = "/kg/"
	deadline = 60 * time.Second
	coordKey = "coordinator"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	t.Cleanup(cancel)
	return ctx
}

// node is one kgateway node's view of etcd: a client, a session, an
// ownership manager.
type node struct {
	name string
	cli  *clientv3.Client
	m    *owner.Manager
}

func newNode(t *testing.T, e *etcdtest.Server, name string) *node {
	t.Helper()
	cli := e.Client(t)
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(60))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return &node{name: name, cli: cli, m: owner.New(cli, sess, name, prefix)}
}

func (n *node) acquire(t *testing.T) owner.Ownership {
	t.Helper()
	o, err := n.m.Acquire(ctxT(t), coordKey)
	if err != nil {
		t.Fatalf("%s acquires the coordinator: %v", n.name, err)
	}
	return o
}

// openMirrored opens an offsets store in dir mirrored under o.
func (n *node) openMirrored(t *testing.T, dir string, o owner.Ownership, opts Options) *offsets.Store {
	t.Helper()
	st, err := offsets.Open(dir, offsets.Options{Mirror: NewMirror(n.cli, n.m, o, prefix, opts)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// restoreDir restores the mirror into a fresh directory.
func restoreDir(t *testing.T, cli *clientv3.Client) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "offsets")
	if err := Restore(ctxT(t), cli, prefix, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// restore restores the mirror into a fresh directory and opens it.
func restore(t *testing.T, cli *clientv3.Client) (*offsets.Store, string) {
	t.Helper()
	dir := restoreDir(t, cli)
	st, err := offsets.Open(dir, offsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, dir
}

// dumpDir is every key and value of the pebble store in dir (closed).
func dumpDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	db, err := pebble.Open(dir, &pebble.Options{Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := map[string]string{}
	for it.First(); it.Valid(); it.Next() {
		out[string(it.Key())] = string(it.Value())
	}
	return out
}

// etcdDump is every key under prefix+sub and its value.
func etcdDump(t *testing.T, cli *clientv3.Client, sub string) map[string]string {
	t.Helper()
	resp, err := cli.Get(ctxT(t), prefix+sub, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, kv := range resp.Kvs {
		out[string(kv.Key)] = string(kv.Value)
	}
	return out
}

func tp(topic string, p int32) offsets.TopicPartition {
	return offsets.TopicPartition{Topic: topic, Partition: p}
}

func commit(topic string, p int32, off int64) offsets.Commit {
	return offsets.Commit{TopicPartition: tp(topic, p), Offset: offsets.Offset(off), LeaderEpoch: -1, Metadata: "m", CommitTime: time.UnixMilli(1_700_000_000_000)}
}

// groupView is what OffsetFetch and DescribeGroups read of a store.
type groupView struct {
	Offsets  map[string][]offsets.Commit
	Groups   []offsets.Group
	Classic  map[string]offsets.ClassicGroup
	Consumer map[string]offsets.ConsumerGroup
	Txns     []offsets.Txn
}

func view(t *testing.T, st *offsets.Store) groupView {
	t.Helper()
	v := groupView{Offsets: map[string][]offsets.Commit{}}
	var err error
	if v.Groups, err = st.Groups(); err != nil {
		t.Fatal(err)
	}
	for _, g := range v.Groups {
		if v.Offsets[g.ID], err = st.GroupOffsets(g.ID); err != nil {
			t.Fatal(err)
		}
	}
	if v.Classic, err = st.ClassicGroups(); err != nil {
		t.Fatal(err)
	}
	if v.Consumer, err = st.ConsumerGroups(); err != nil {
		t.Fatal(err)
	}
	if v.Txns, err = st.Txns(); err != nil {
		t.Fatal(err)
	}
	return v
}

// writeGroups writes commits and group state of every kind, including
// a DeleteGroup (a pebble range delete) and a DeleteOffsets.
func writeGroups(t *testing.T, st *offsets.Store) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Commit("g1", []offsets.Commit{commit("a", 0, 10), commit("a", 1, 11), commit("b", 0, 12)}))
	must(st.Commit("g1", []offsets.Commit{commit("a", 0, 20)}))
	must(st.Commit("gone", []offsets.Commit{commit("a", 0, 1), commit("a", 1, 2)}))
	must(st.PutGroup(offsets.Group{ID: "gone", ProtocolType: "consumer", State: offsets.GroupEmpty}))
	must(st.DeleteGroup("gone"))
	must(st.Commit("g2", []offsets.Commit{commit("a", 0, 5), commit("a", 1, 6)}))
	must(st.DeleteOffsets("g2", []offsets.TopicPartition{tp("a", 1)}))
	must(st.PutClassicGroup(offsets.ClassicGroup{
		Group:  offsets.Group{ID: "g1", ProtocolType: "consumer", Protocol: "range", Generation: 3, State: offsets.GroupActive, StateTime: time.UnixMilli(1_700_000_000_000)},
		Leader: "m1",
		Members: []offsets.ClassicMember{{ID: "m1", ClientID: "c", ClientHost: "/127.0.0.1", SessionTimeout: 45 * time.Second,
			RebalanceTimeout: time.Minute, ProtocolType: "consumer", Protocols: []offsets.Protocol{{Name: "range", Metadata: []byte{1, 2}}}, Assignment: []byte{3}}},
	}, 0))
	must(st.PutConsumerGroup(offsets.ConsumerGroup{Group: offsets.Group{ID: "k1", Generation: 2, State: offsets.GroupActive, StateTime: time.UnixMilli(1_700_000_000_000)},
		Members: []offsets.ConsumerMember{{ID: "x", ClientID: "c", Epoch: 2, Topics: []string{"a"}}}}, 0))
	must(st.PutTxn(offsets.Txn{ID: "tx", ProducerID: 4, LastProducerID: -1, LastEpoch: -1, State: offsets.TxnOngoing, Groups: []string{"g2"}}))
	must(st.PutPending("tx", "g2", []offsets.Commit{commit("b", 0, 99)}))
}

// The fenced store mirror, restore at one revision: what a mirrored store on node A wrote, node B restores
// exactly: the same keys and values, the same offsets and groups.
func TestRestoreIsTheMirroredStore(t *testing.T) {
	e := etcdtest.Start(t)
	a, b := newNode(t, e, "a"), newNode(t, e, "b")
	oa := a.acquire(t)
	dirA := t.TempDir()
	stA := a.openMirrored(t, dirA, oa, Options{})
	writeGroups(t, stA)
	want := view(t, stA)
	if len(want.Offsets["g1"]) != 3 || len(want.Offsets["g2"]) != 1 || want.Offsets["gone"] != nil {
		t.Fatalf("setup: offsets %v", want.Offsets)
	}
	if err := stA.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.m.Release(ctxT(t), oa); err != nil {
		t.Fatal(err)
	}

	b.acquire(t)
	dirB := filepath.Join(t.TempDir(), "offsets")
	if err := Restore(ctxT(t), b.cli, prefix, dirB); err != nil {
		t.Fatal(err)
	}
	if got, want := dumpDir(t, dirB), dumpDir(t, dirA); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored keyspace differs:\nrestored %q\nmirrored %q", got, want)
	}
	stB, err := offsets.Open(dirB, offsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stB.Close()
	if got := view(t, stB); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored store reads differently:\nrestored %+v\nmirrored %+v", got, want)
	}
	// Restore refuses to overwrite a store.
	if err := Restore(ctxT(t), b.cli, prefix, dirB); err == nil {
		t.Fatal("Restore into a non-empty directory succeeded")
	}
}

// The fenced store mirror (the fenced transaction, no acknowledgement without a fenced commit): once another node acquired the coordinator, a write
// through the old mirror fails fenced and changes nothing, in etcd or in
// the local store; later writes stay fenced.
func TestFencedMirrorWritesNothing(t *testing.T) {
	e := etcdtest.Start(t)
	a, b := newNode(t, e, "a"), newNode(t, e, "b")
	oa := a.acquire(t)
	st := a.openMirrored(t, t.TempDir(), oa, Options{})
	if err := st.Commit("g", []offsets.Commit{commit("a", 0, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := a.m.Release(ctxT(t), oa); err != nil {
		t.Fatal(err)
	}
	b.acquire(t)
	before, localBefore := etcdDump(t, a.cli, "kv"), view(t, st)
	for i := 0; i < 2; i++ {
		err := st.Commit("g", []offsets.Commit{commit("a", 0, 2), commit("a", 1, 2)})
		if !errors.Is(err, owner.ErrFenced) {
			t.Fatalf("write %d after losing the coordinator: %v, want fenced", i, err)
		}
	}
	if err := st.DeleteGroup("g"); !errors.Is(err, owner.ErrFenced) {
		t.Fatalf("delete after losing the coordinator: %v, want fenced", err)
	}
	if after := etcdDump(t, a.cli, "kv"); !reflect.DeepEqual(after, before) {
		t.Fatalf("fenced write changed etcd:\nbefore %q\nafter  %q", before, after)
	}
	if after := view(t, st); !reflect.DeepEqual(after, localBefore) {
		t.Fatalf("fenced write changed the local store:\nbefore %+v\nafter  %+v", localBefore, after)
	}
}

// manyCommits is one commit per partition of topic t.
func manyCommits(n int, off int64) []offsets.Commit {
	cs := make([]offsets.Commit, n)
	for i := range cs {
		cs[i] = commit("t", int32(i), off+int64(i))
	}
	return cs
}

// Whole mirrored batches, no history in etcd: a batch far beyond one etcd transaction (5000 partitions'
// commits, then a DeleteGroup of them all) is mirrored and restored whole,
// and leaves no chunk or pending record behind: with etcd's bounds (one
// chunk, folded in transactions of 128 operations) and with a small byte
// bound (many chunks, folded by size).
func TestHugeBatch(t *testing.T) {
	for name, opts := range map[string]Options{"default": {}, "64KiB": {MaxTxnBytes: 64 << 10}} {
		t.Run(name, func(t *testing.T) { testHugeBatch(t, opts) })
	}
}

func testHugeBatch(t *testing.T, opts Options) {
	e := etcdtest.Start(t)
	a := newNode(t, e, "a")
	st := a.openMirrored(t, t.TempDir(), a.acquire(t), opts)
	const n = 5000
	if err := st.Commit("big", manyCommits(n, 0)); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit("big", manyCommits(n, 100_000)); err != nil { // overwrites every key
		t.Fatal(err)
	}
	if err := st.Commit("small", []offsets.Commit{commit("a", 0, 7)}); err != nil {
		t.Fatal(err)
	}
	checkClean(t, a.cli)
	if got := len(etcdDump(t, a.cli, "kv/")); got != n+1 {
		t.Fatalf("etcd holds %d kv keys, want %d", got, n+1)
	}
	restored, _ := restore(t, a.cli)
	if got, want := view(t, restored), view(t, st); !reflect.DeepEqual(got, want) || len(got.Offsets["big"]) != n {
		t.Fatalf("restored %d offsets of big, want %d equal to the store's", len(got.Offsets["big"]), n)
	}
	if err := st.DeleteGroup("big"); err != nil {
		t.Fatal(err)
	}
	checkClean(t, a.cli)
	if got := len(etcdDump(t, a.cli, "kv/")); got != 1 {
		t.Fatalf("after DeleteGroup etcd holds %d kv keys, want 1", got)
	}
}

// checkClean: no pending batch or chunk is left (no history in etcd).
func checkClean(t *testing.T, cli *clientv3.Client) {
	t.Helper()
	if left := etcdDump(t, cli, "kvbatch/"); len(left) > 0 {
		t.Fatalf("%d batch chunks left in etcd", len(left))
	}
	if left := etcdDump(t, cli, "kvpending"); len(left) > 0 {
		t.Fatalf("pending record left: %v", left)
	}
}

// Whole mirrored batches, no history in etcd: a large batch cut by a crash is never half-visible. Cut after
// its chunks but before its commit point, it is absent from a restore and
// its chunks are deleted by the next coordinator's first write; cut in
// the middle of its fold, it is restored whole and the next coordinator
// finishes the fold.
func TestCrashedLargeBatch(t *testing.T) {
	e := etcdtest.Start(t)
	a, b := newNode(t, e, "a"), newNode(t, e, "b")
	oa := a.acquire(t)
	st := a.openMirrored(t, t.TempDir(), oa, Options{})
	if err := st.Commit("g", manyCommits(300, 0)); err != nil {
		t.Fatal(err)
	}
	base := view(t, st)

	// The batch a crashed coordinator was writing: 300 new offsets, and a
	// range delete of a group that one of them recreates.
	mirrored, err := pebble.Open(t.TempDir(), &pebble.Options{Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer mirrored.Close()
	batch := mirrored.NewBatch()
	defer batch.Close()
	for i := 0; i < 300; i++ {
		k := fmt.Sprintf("key-%04d", i)
		if err := batch.Set([]byte(k), []byte("v"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := batch.DeleteRange([]byte("key-0100"), []byte("key-0200"), nil); err != nil {
		t.Fatal(err)
	}
	if err := batch.Set([]byte("key-0150"), []byte("again"), nil); err != nil {
		t.Fatal(err)
	}
	ops, err := netOps(batch.Repr())
	if err != nil {
		t.Fatal(err)
	}
	mr := &mirror{cli: a.cli, m: a.m, o: oa, prefix: prefix}
	mr.opts.setDefaults()
	if err := mr.settle(); err != nil {
		t.Fatal(err)
	}

	// Cut before the commit point: chunks only.
	if err := mr.fencedTxn(clientv3.OpPut(chunkKey(prefix, "orphan", 0), string(batch.Repr()))); err != nil {
		t.Fatal(err)
	}
	restored, _ := restore(t, a.cli)
	if got := view(t, restored); !reflect.DeepEqual(got, base) {
		t.Fatalf("a batch cut before its commit point is visible")
	}

	// Cut in the fold: committed, half of its ops in kv/.
	repr, chunks := batch.Repr(), 0
	for off := 0; off < len(repr); off += 1000 { // several chunks
		if err := mr.fencedTxn(clientv3.OpPut(chunkKey(prefix, "cut", chunks), string(repr[off:min(off+1000, len(repr))]))); err != nil {
			t.Fatal(err)
		}
		chunks++
	}
	if chunks < 3 {
		t.Fatalf("setup: %d chunks", chunks)
	}
	if err := mr.commit("cut", []clientv3.Op{clientv3.OpPut(prefix+"kvpending", fmt.Sprintf("cut %d", chunks))}); err != nil {
		t.Fatal(err)
	}
	if err := mr.fold(ops[:len(ops)/2]); err != nil {
		t.Fatal(err)
	}
	if err := mirrored.Apply(batch, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.m.Release(ctxT(t), oa); err != nil {
		t.Fatal(err)
	}
	wantKeys := func() map[string]string {
		out := map[string]string{}
		it, _ := mirrored.NewIter(nil)
		defer it.Close()
		for it.First(); it.Valid(); it.Next() {
			out[string(it.Key())] = string(it.Value())
		}
		return out
	}()
	ob := b.acquire(t)
	got := rawKeys(t, restoreDir(t, b.cli), "key-")
	if !reflect.DeepEqual(got, wantKeys) {
		t.Fatalf("a batch cut in its fold restores as %d keys, want the whole batch's %d", len(got), len(wantKeys))
	}

	// B's first write folds the batch and deletes every chunk.
	stB := b.openMirrored(t, filepath.Join(t.TempDir(), "b"), ob, Options{})
	if err := stB.Commit("g", []offsets.Commit{commit("z", 0, 1)}); err != nil {
		t.Fatal(err)
	}
	checkClean(t, b.cli)
	if got := rawKeys(t, restoreDir(t, b.cli), "key-"); !reflect.DeepEqual(got, wantKeys) {
		t.Fatalf("after the fold, kv/ holds %d batch keys, want %d", len(got), len(wantKeys))
	}
}

// rawKeys is the keys starting with p, and their values, of the closed
// store in dir.
func rawKeys(t *testing.T, dir, p string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range dumpDir(t, dir) {
		if len(k) >= len(p) && k[:len(p)] == p {
			out[k] = v
		}
	}
	return out
}

// Unknown outcomes resolved first: while etcd is down writes fail and change nothing locally; once it
// is back they resume, and the restored store has exactly what was
// acknowledged.
func TestWritesResumeAfterEtcdRestart(t *testing.T) {
	e := etcdtest.Start(t)
	a := newNode(t, e, "a")
	st := a.openMirrored(t, t.TempDir(), a.acquire(t), Options{Timeout: 2 * time.Second})
	if err := st.Commit("g", []offsets.Commit{commit("a", 0, 1)}); err != nil {
		t.Fatal(err)
	}
	e.Stop()
	if err := st.Commit("g", []offsets.Commit{commit("a", 0, 2)}); err == nil {
		t.Fatal("a write succeeded with etcd down")
	}
	if c, _, _ := st.Get("g", tp("a", 0)); c.Offset != 1 {
		t.Fatalf("failed write applied locally: offset %d", c.Offset)
	}
	e.Restart()
	ctx := ctxT(t)
	for { // the client reconnects
		if _, err := a.cli.Get(ctx, prefix+"kvlast"); err == nil {
			break
		} else if ctx.Err() != nil {
			t.Fatalf("etcd unreachable after its restart: %v", err)
		}
	}
	if err := st.Commit("g", []offsets.Commit{commit("a", 0, 3)}); err != nil {
		t.Fatalf("writes do not resume after etcd restarted: %v", err)
	}
	restored, _ := restore(t, a.cli)
	if got, want := view(t, restored), view(t, st); !reflect.DeepEqual(got, want) || got.Offsets["g"][0].Offset != 3 {
		t.Fatalf("restored %+v, want %+v", got, want)
	}
}

// Producer id blocks: two allocators taking ids at once never hand out the same id, nor
// does a new allocator after etcd restarts.
func TestProducerIDsNeverRepeat(t *testing.T) {
	e := etcdtest.Start(t)
	c1, c2 := e.Client(t), e.Client(t)
	seen := map[int64]string{}
	var mu sync.Mutex
	take := func(name string, next func(context.Context) (int64, error), n int) error {
		for i := 0; i < n; i++ {
			id, err := next(ctxT(t))
			if err != nil {
				return err
			}
			mu.Lock()
			prev, dup := seen[id]
			seen[id] = name
			mu.Unlock()
			if dup {
				return fmt.Errorf("id %d handed out by %s and %s", id, prev, name)
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cli := c1
			if i%2 == 1 {
				cli = c2
			}
			errs[i] = take(fmt.Sprintf("allocator %d", i), ProducerIDs(cli, prefix, 7), 100)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	e.Restart()
	if err := take("after restart", ProducerIDs(e.Client(t), prefix, 0), 50); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 450 {
		t.Fatalf("%d ids, want 450", len(seen))
	}
}

// Unknown outcomes resolved first: an unknown outcome is resolved before the next write. A commit
// that never applied is voided and writes go on; one found applied, while
// the store was told it failed, stops the mirror for good (ErrDiverged).
func TestUnknownOutcomeResolved(t *testing.T) {
	e := etcdtest.Start(t)
	a := newNode(t, e, "a")
	mr := &mirror{cli: a.cli, m: a.m, o: a.acquire(t), prefix: prefix}
	mr.opts.setDefaults()
	db, err := pebble.Open(t.TempDir(), &pebble.Options{Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	write := func(k string) error {
		b := db.NewBatch()
		defer b.Close()
		if err := b.Set([]byte(k), []byte("v"), nil); err != nil {
			t.Fatal(err)
		}
		return mr.write(b)
	}
	if err := write("k1"); err != nil {
		t.Fatal(err)
	}

	mr.inDoubt = "never-sent" // a commit lost before reaching etcd
	if err := write("k2"); err != nil {
		t.Fatalf("write after an unknown outcome that never applied: %v", err)
	}

	before := mr.lastRev // a commit that applied, its answer lost
	if err := mr.commit("applied", []clientv3.Op{clientv3.OpPut(kvKey(prefix, []byte("k3")), "v")}); err != nil {
		t.Fatal(err)
	}
	mr.lastRev, mr.inDoubt = before, "applied"
	for i := 0; i < 2; i++ {
		if err := write("k4"); !errors.Is(err, ErrDiverged) {
			t.Fatalf("write %d after an unknown outcome that applied: %v, want ErrDiverged", i, err)
		}
	}
	if _, ok := etcdDump(t, a.cli, "kv/")[kvKey(prefix, []byte("k4"))]; ok {
		t.Fatal("a diverged mirror wrote")
	}
}

// revision is etcd's current revision: each successful transaction that
// writes adds one.
func revision(t *testing.T, cli *clientv3.Client) int64 {
	t.Helper()
	resp, err := cli.Get(ctxT(t), prefix+"kvlast")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// The fenced store mirror with the store's groups (offsets O8): concurrent
// writers' batches reach the mirror grouped, each group one etcd
// transaction, and the largest group the store makes by default (its
// entry and byte bounds) fits one transaction under etcd's defaults, so
// a group never spills into chunks.
func TestGroupedWritesOneTransactionEach(t *testing.T) {
	e := etcdtest.Start(t)
	a := newNode(t, e, "a")
	o := a.acquire(t)
	dir := t.TempDir()
	mirror := NewMirror(a.cli, a.m, o, prefix, Options{})
	var mu sync.Mutex
	calls, entries := 0, 0
	st, err := offsets.Open(dir, offsets.Options{Mirror: func(b *pebble.Batch) error {
		mu.Lock()
		calls++
		entries += int(b.Count())
		mu.Unlock()
		return mirror(b)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Commit("warm", []offsets.Commit{commit("w", 0, 1)}); err != nil { // the first write settles
		t.Fatal(err)
	}

	// The bounds: one batch as large as a default group, in entries and
	// in bytes, is one transaction.
	big := make([]offsets.Commit, offsets.DefaultMirrorGroupEntries)
	for i := range big {
		big[i] = commit("t", int32(i), int64(i))
		big[i].Metadata = strings.Repeat("m", offsets.DefaultMirrorGroupBytes/offsets.DefaultMirrorGroupEntries-64)
	}
	before := revision(t, a.cli)
	if err := st.Commit("big", big); err != nil {
		t.Fatal(err)
	}
	if got := revision(t, a.cli) - before; got != 1 {
		t.Fatalf("a batch of a default group's bounds took %d etcd transactions, want 1", got)
	}

	// Concurrent writers: every group one transaction.
	mu.Lock()
	calls, entries = 0, 0
	mu.Unlock()
	before = revision(t, a.cli)
	const writers, each = 16, 4
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := st.Commit(fmt.Sprintf("g%d", w), []offsets.Commit{commit("t", int32(i), int64(i))}); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", w, err)
		}
	}
	mu.Lock()
	gotCalls, gotEntries := calls, entries
	mu.Unlock()
	if gotEntries != writers*each {
		t.Fatalf("the mirror took %d entries, want %d", gotEntries, writers*each)
	}
	if txns := revision(t, a.cli) - before; txns != int64(gotCalls) {
		t.Fatalf("%d groups took %d etcd transactions, want one each", gotCalls, txns)
	}
	t.Logf("%d writes in %d groups", writers*each, gotCalls)
	checkClean(t, a.cli)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := dumpDir(t, restoreDir(t, a.cli)), dumpDir(t, dir); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored keyspace differs:\nrestored %q\nmirrored %q", got, want)
	}
}
