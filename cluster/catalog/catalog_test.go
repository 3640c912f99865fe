package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kgateway/kgateway/cluster/catalog"
	"github.com/kgateway/kgateway/cluster/etcdtest"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/topicconfig"
)

var _ kafka.Catalog = (*catalog.Catalog)(nil)

// deadline bounds every wait of a test.
const deadline = 60 * time.Second

const prefix = "/kg/"

// changeTimeout is each change's timeout (Options.Timeout): short enough
// that a change while etcd is down fails quickly, long for a loaded
// machine otherwise.
const changeTimeout = 10 * time.Second

// node is one kgateway node as the catalog sees it: a real resolver over
// pebble in a directory of its own, and its Catalog on its own client.
type node struct {
	t     *testing.T
	name  string
	dir   string
	srv   *etcdtest.Server
	cfg   resolver.Config
	store *storage.Store
	r     *resolver.Resolver
	cat   *catalog.Catalog
	id    int32 // Options.NodeID
	// deletes counts OnDelete calls, shared by the nodes of a test.
	deletes *deleteLog
}

// deleteLog records the OnDelete calls of every node.
type deleteLog struct {
	mu    sync.Mutex
	calls []string
}

func (d *deleteLog) add(node string, id resolver.TopicID, parts int32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, fmt.Sprintf("%s %s %d", node, id, parts))
}

func (d *deleteLog) get() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}

func newNode(t *testing.T, srv *etcdtest.Server, name string, d *deleteLog) *node {
	t.Helper()
	n := &node{t: t, name: name, dir: t.TempDir(), srv: srv, deletes: d,
		cfg: resolver.Config{AutoCreate: true, NumPartitions: 2, RetentionCheckInterval: -1}}
	n.open()
	n.start()
	t.Cleanup(n.stop)
	return n
}

// open opens the node's store and resolver over its directory.
func (n *node) open() {
	n.t.Helper()
	st, err := storage.Open(n.dir, storage.Options{})
	if err != nil {
		n.t.Fatal(err)
	}
	r, err := resolver.Open(st, n.cfg)
	if err != nil {
		st.Close()
		n.t.Fatal(err)
	}
	n.store, n.r = st, r
}

// newCatalog makes the node's catalog on a client of its own.
func (n *node) newCatalog() {
	n.t.Helper()
	c, err := catalog.New(n.srv.Client(n.t), prefix, n.r, catalog.Options{
		OnDelete: func(id resolver.TopicID, parts int32) { n.deletes.add(n.name, id, parts) },
		Timeout:  changeTimeout,
		NodeID:   n.id,
	})
	if err != nil {
		n.t.Fatal(err)
	}
	n.cat = c
}

func (n *node) start() {
	n.t.Helper()
	n.newCatalog()
	if err := n.cat.Start(ctxT(n.t)); err != nil {
		n.t.Fatal(err)
	}
}

// stop closes the catalog, the resolver and the store (the directory
// stays).
func (n *node) stop() {
	if n.cat != nil {
		n.cat.Close()
		n.cat = nil
	}
	if n.r != nil {
		n.r.Close()
		n.r = nil
	}
	if n.store != nil {
		n.store.Close()
		n.store = nil
	}
}

// restart is the node starting again over its directory: a new resolver
// and a new catalog.
func (n *node) restart() {
	n.t.Helper()
	n.stop()
	n.open()
	n.start()
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	t.Cleanup(cancel)
	return ctx
}

// settle waits until every node applied every change made so far. A test
// writes only topic records, so etcd's current revision is a topic
// change's, which every node's watch delivers.
func settle(t *testing.T, srv *etcdtest.Server, nodes ...*node) {
	t.Helper()
	resp, err := srv.Client(t).Get(ctxT(t), "sync")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if err := n.cat.WaitApplied(ctxT(t), resp.Header.Revision); err != nil {
			t.Fatalf("%s: %v", n.name, err)
		}
	}
}

// same checks that every node has the topic, with one id, and returns it.
func same(t *testing.T, name string, nodes ...*node) resolver.Topic {
	t.Helper()
	var first resolver.Topic
	for i, n := range nodes {
		tp, ok := n.r.Topic(name)
		if !ok {
			t.Fatalf("%s has no topic %q", n.name, name)
		}
		if i == 0 {
			first = tp
			continue
		}
		if tp.ID != first.ID || tp.Partitions != first.Partitions || !maps.Equal(tp.Configs, first.Configs) {
			t.Fatalf("%s has %q as %+v, %s as %+v", n.name, name, tp, nodes[0].name, first)
		}
	}
	return first
}

func absent(t *testing.T, name string, nodes ...*node) {
	t.Helper()
	for _, n := range nodes {
		if tp, ok := n.r.Topic(name); ok {
			t.Fatalf("%s still has %q: %+v", n.name, name, tp)
		}
	}
}

func two(t *testing.T) (*etcdtest.Server, *node, *node, *deleteLog) {
	srv := etcdtest.Start(t)
	d := &deleteLog{}
	return srv, newNode(t, srv, "A", d), newNode(t, srv, "B", d), d
}

func create(t *testing.T, n *node, name string, parts int32, configs map[string]string) resolver.Topic {
	t.Helper()
	tp, err := n.cat.CreateTopic(name, parts, -1, configs, false)
	if err != nil {
		t.Fatalf("%s creates %s: %v", n.name, name, err)
	}
	return tp
}

// TestCreateAppearsEverywhere (etcd as the catalog's truth, waiting for the local apply): a topic created on A is on A when
// CreateTopic returns, and on B with the same id, partitions and configs.
func TestCreateAppearsEverywhere(t *testing.T) {
	srv, a, b, _ := two(t)
	cfg := map[string]string{"retention.ms": "60000", "cleanup.policy": "compact"}
	tp := create(t, a, "orders", 3, cfg)
	if got, ok := a.r.Topic("orders"); !ok || got.ID != tp.ID {
		t.Fatalf("A after CreateTopic returned: %+v, %v; want id %s (waiting for the local apply)", got, ok, tp.ID)
	}
	settle(t, srv, a, b)
	got := same(t, "orders", a, b)
	if got.ID != tp.ID || got.Partitions != 3 || !maps.Equal(got.Configs, cfg) {
		t.Fatalf("B has %+v, want %+v", got, tp)
	}
	// B's copy takes appends in every partition.
	for p := range int32(3) {
		if _, _, _, err := b.r.Bounds("orders", p); err != nil {
			t.Fatalf("B partition %d: %v", p, err)
		}
	}
	if _, err := b.cat.CreateTopic("orders", 1, -1, nil, false); !errors.Is(err, resolver.ErrTopicExists) {
		t.Fatalf("create again on B: %v, want ErrTopicExists", err)
	}
}

// TestConcurrentCreate (one id per name): A and B create one name at once: one wins,
// the other gets TOPIC_ALREADY_EXISTS, both end with the winner's id.
func TestConcurrentCreate(t *testing.T) {
	srv, a, b, _ := two(t)
	for round := range 5 {
		name := "race-" + string(rune('a'+round))
		var wg sync.WaitGroup
		start := make(chan struct{})
		tps := make([]resolver.Topic, 2)
		errs := make([]error, 2)
		for i, n := range []*node{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				tps[i], errs[i] = n.cat.CreateTopic(name, 2, 1, nil, false)
			}()
		}
		close(start)
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won == -1:
				won = i
			case err == nil:
				t.Fatalf("%s: both nodes created it", name)
			case !errors.Is(err, resolver.ErrTopicExists):
				t.Fatalf("%s: loser got %v, want ErrTopicExists", name, err)
			}
		}
		if won == -1 {
			t.Fatalf("%s: nobody created it: %v", name, errs)
		}
		settle(t, srv, a, b)
		if got := same(t, name, a, b); got.ID != tps[won].ID {
			t.Fatalf("%s: nodes have id %s, the winner created %s", name, got.ID, tps[won].ID)
		}
	}
}

// TestConcurrentEnsure (one id per name): auto-creation of one name on both nodes at
// once returns one topic, one id, to both.
func TestConcurrentEnsure(t *testing.T) {
	srv, a, b, _ := two(t)
	for round := range 5 {
		name := "auto-" + string(rune('a'+round))
		var wg sync.WaitGroup
		start := make(chan struct{})
		tps := make([]resolver.Topic, 2)
		errs := make([]error, 2)
		for i, n := range []*node{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				tps[i], errs[i] = n.cat.EnsureTopic(name)
			}()
		}
		close(start)
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("%s: %v", name, errs)
		}
		if tps[0].ID != tps[1].ID || tps[0].Partitions != 2 {
			t.Fatalf("%s: A got %+v, B got %+v", name, tps[0], tps[1])
		}
		settle(t, srv, a, b)
		if got := same(t, name, a, b); got.ID != tps[0].ID {
			t.Fatalf("%s: nodes have %s, EnsureTopic returned %s", name, got.ID, tps[0].ID)
		}
	}
	// Without auto-creation nothing is created, and a bad name is
	// refused as the resolver refuses it.
	b.stop()
	b.cfg.AutoCreate = false
	b.open()
	b.start()
	if _, err := b.cat.EnsureTopic("manual"); !errors.Is(err, resolver.ErrUnknownTopic) {
		t.Fatalf("EnsureTopic without auto-create: %v, want ErrUnknownTopic", err)
	}
	if _, err := b.cat.EnsureTopic("bad name"); !errors.Is(err, resolver.ErrInvalidTopic) {
		t.Fatalf("EnsureTopic of a bad name: %v, want ErrInvalidTopic", err)
	}
	// A topic another node made is returned, even before the watch
	// brought it.
	create(t, a, "made-on-a", 1, nil)
	if tp, err := b.cat.EnsureTopic("made-on-a"); err != nil || tp.ID != same(t, "made-on-a", a).ID {
		t.Fatalf("EnsureTopic of A's topic on B: %+v, %v", tp, err)
	}
	settle(t, srv, a, b)
	absent(t, "manual", a, b)
}

// TestDelete (guarded deletion): a deletion removes the topic on both nodes, and the
// deleting node, only it, calls OnDelete once with the id and partitions.
// Of two nodes deleting at once one succeeds.
func TestDelete(t *testing.T) {
	srv, a, b, d := two(t)
	tp := create(t, a, "gone", 3, nil)
	settle(t, srv, a, b)
	if err := b.cat.DeleteTopic("gone"); err != nil {
		t.Fatal(err)
	}
	absent(t, "gone", b) // Waiting for the local apply: applied on B when DeleteTopic returned
	settle(t, srv, a, b)
	absent(t, "gone", a, b)
	if got, want := d.get(), []string{"B " + tp.ID.String() + " 3"}; len(got) != 1 || got[0] != want[0] {
		t.Fatalf("OnDelete calls %v, want %v", got, want)
	}
	if err := a.cat.DeleteTopic("gone"); !errors.Is(err, resolver.ErrUnknownTopic) {
		t.Fatalf("delete again: %v, want ErrUnknownTopic", err)
	}

	// Both at once.
	tp = create(t, a, "gone2", 1, nil)
	settle(t, srv, a, b)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, n := range []*node{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = n.cat.DeleteTopic("gone2") }()
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("concurrent deletes: %v; want one success", errs)
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, resolver.ErrUnknownTopic) {
			t.Fatalf("losing delete: %v, want ErrUnknownTopic", err)
		}
	}
	settle(t, srv, a, b)
	absent(t, "gone2", a, b)
	if got := d.get(); len(got) != 2 || got[1][2:] != tp.ID.String()+" 1" {
		t.Fatalf("OnDelete calls %v, want one more for %s", got, tp.ID)
	}
	// A name deleted can be created again, with a new id.
	tp3 := create(t, b, "gone2", 1, nil)
	settle(t, srv, a, b)
	if got := same(t, "gone2", a, b); got.ID != tp3.ID || got.ID == tp.ID {
		t.Fatalf("recreated topic has id %s; created %s, old %s", got.ID, tp3.ID, tp.ID)
	}
}

// TestAlterAndPartitions (compare-and-swap changes): configs (replace and incremental) and
// partition growth made on one node reach both; a bad change is refused
// with the resolver's error.
func TestAlterAndPartitions(t *testing.T) {
	srv, a, b, _ := two(t)
	create(t, a, "t", 1, map[string]string{"retention.ms": "1000"})
	settle(t, srv, a, b)

	if err := b.cat.AlterTopicConfigs("t", map[string]string{"segment.ms": "5000", "cleanup.policy": "delete"}, false); err != nil {
		t.Fatal(err)
	}
	settle(t, srv, a, b)
	want := map[string]string{"segment.ms": "5000", "cleanup.policy": "delete"}
	if got := same(t, "t", a, b); !maps.Equal(got.Configs, want) {
		t.Fatalf("after alter: %v, want %v", got.Configs, want)
	}

	ops := []topicconfig.Op{
		{Name: "cleanup.policy", Op: topicconfig.OpAppend, Value: "compact"},
		{Name: "segment.ms", Op: topicconfig.OpDelete},
		{Name: "retention.bytes", Op: topicconfig.OpSet, Value: "100000"},
	}
	if err := a.cat.IncrementalAlterTopicConfigs("t", ops, false); err != nil {
		t.Fatal(err)
	}
	settle(t, srv, a, b)
	want = map[string]string{"cleanup.policy": "delete,compact", "retention.bytes": "100000"}
	if got := same(t, "t", a, b); !maps.Equal(got.Configs, want) {
		t.Fatalf("after incremental alter: %v, want %v", got.Configs, want)
	}

	if err := b.cat.CreatePartitions("t", 4, false); err != nil {
		t.Fatal(err)
	}
	if p, _ := b.r.Partitions("t"); p != 4 {
		t.Fatalf("B has %d partitions when CreatePartitions returned, want 4 (waiting for the local apply)", p)
	}
	settle(t, srv, a, b)
	if got := same(t, "t", a, b); got.Partitions != 4 {
		t.Fatalf("partitions %d, want 4", got.Partitions)
	}
	if _, _, _, err := a.r.Bounds("t", 3); err != nil {
		t.Fatalf("A's new partition: %v", err)
	}

	for _, tc := range []struct {
		what string
		err  error
		want error
	}{
		{"shrink", a.cat.CreatePartitions("t", 2, false), resolver.ErrInvalidPartitions},
		{"bad config", a.cat.AlterTopicConfigs("t", map[string]string{"retention.ms": "x"}, false), resolver.ErrInvalidConfig},
		{"bad op", a.cat.IncrementalAlterTopicConfigs("t", []topicconfig.Op{{Name: "segment.ms", Op: topicconfig.OpAppend, Value: "1"}}, false), resolver.ErrInvalidConfig},
		{"tiered", a.cat.AlterTopicConfigs("t", map[string]string{"remote.storage.enable": "true"}, false), resolver.ErrInvalidConfig},
		{"view", a.cat.IncrementalAlterTopicConfigs("t", []topicconfig.Op{{Name: topicconfig.CompactedView, Value: "true"}}, false), resolver.ErrInvalidConfig},
		{"no topic", a.cat.AlterTopicConfigs("nope", nil, false), resolver.ErrUnknownTopic},
		{"internal", a.cat.CreatePartitions(resolver.OffsetsTopic, 5, false), resolver.ErrUnknownTopic},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.what, tc.err, tc.want)
		}
	}
	settle(t, srv, a, b)
	if got := same(t, "t", a, b); got.Partitions != 4 || !maps.Equal(got.Configs, want) {
		t.Fatalf("a refused change changed the topic: %+v", got)
	}
}

// TestConcurrentAlters (compare-and-swap changes): incremental alters of different configs on
// both nodes at once all land: none overwrites another's.
func TestConcurrentAlters(t *testing.T) {
	srv, a, b, _ := two(t)
	create(t, a, "t", 1, nil)
	settle(t, srv, a, b)
	names := []string{"retention.ms", "segment.ms", "delete.retention.ms", "min.compaction.lag.ms"}
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	for i, name := range names {
		n := []*node{a, b}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = n.cat.IncrementalAlterTopicConfigs("t", []topicconfig.Op{{Name: name, Value: "1000"}}, false)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("alter %s: %v", names[i], err)
		}
	}
	settle(t, srv, a, b)
	got := same(t, "t", a, b)
	for _, name := range names {
		if got.Configs[name] != "1000" {
			t.Fatalf("configs %v: %s lost", got.Configs, name)
		}
	}
}

// TestValidateOnly (validation before writing): validateOnly changes nothing, in etcd or on
// either node, and still reports the errors.
func TestValidateOnly(t *testing.T) {
	srv, a, b, d := two(t)
	create(t, a, "t", 1, map[string]string{"retention.ms": "1000"})
	settle(t, srv, a, b)
	before := same(t, "t", a, b)
	if _, err := a.cat.CreateTopic("v", 2, 1, nil, true); err != nil {
		t.Fatal(err)
	}
	if _, err := b.cat.CreateTopic("t", 2, 1, nil, true); !errors.Is(err, resolver.ErrTopicExists) {
		t.Fatalf("validate create of an existing topic: %v", err)
	}
	if err := a.cat.CreatePartitions("t", 3, true); err != nil {
		t.Fatal(err)
	}
	if err := b.cat.AlterTopicConfigs("t", map[string]string{"segment.ms": "5"}, true); err != nil {
		t.Fatal(err)
	}
	if err := a.cat.IncrementalAlterTopicConfigs("t", []topicconfig.Op{{Name: "retention.ms", Op: topicconfig.OpDelete}}, true); err != nil {
		t.Fatal(err)
	}
	if err := a.cat.AlterTopicConfigs("t", map[string]string{"segment.ms": "-5"}, true); !errors.Is(err, resolver.ErrInvalidConfig) {
		t.Fatalf("validate a bad alter: %v", err)
	}
	// A real change after them: once both nodes have it, they have every
	// change made before it.
	create(t, b, "barrier", 1, nil)
	settle(t, srv, a, b)
	same(t, "barrier", a, b)
	absent(t, "v", a, b)
	if got := same(t, "t", a, b); got.Partitions != before.Partitions || !maps.Equal(got.Configs, before.Configs) {
		t.Fatalf("validateOnly changed the topic: %+v, was %+v", got, before)
	}
	resp, err := srv.Client(t).Get(ctxT(t), prefix+"topics/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || resp.Count != 2 {
		t.Fatalf("etcd holds %d records (%v), want 2", resp.Count, err)
	}
	if len(d.get()) != 0 {
		t.Fatalf("OnDelete called: %v", d.get())
	}
}

// TestInternalTopics (internal topics kept local): internal topics never reach etcd.
func TestInternalTopics(t *testing.T) {
	srv, a, _, _ := two(t)
	if _, err := a.cat.CreateTopic(resolver.OffsetsTopic, 1, 1, nil, false); !errors.Is(err, resolver.ErrTopicExists) {
		t.Fatalf("create internal: %v, want ErrTopicExists", err)
	}
	if _, err := a.cat.EnsureTopic(resolver.TransactionStateTopic); !errors.Is(err, resolver.ErrInvalidTopic) {
		t.Fatalf("ensure internal: %v, want ErrInvalidTopic", err)
	}
	if err := a.cat.DeleteTopic(resolver.OffsetsTopic); !errors.Is(err, resolver.ErrInvalidTopic) {
		t.Fatalf("delete internal: %v, want ErrInvalidTopic", err)
	}
	resp, err := srv.Client(t).Get(ctxT(t), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || resp.Count != 0 {
		t.Fatalf("etcd holds %d keys (%v), want none", resp.Count, err)
	}
}

// TestRestartConverges (etcd as the catalog's truth): B stops, changes are made (a create, an
// alter, a growth, a deletion, a deletion and re-creation under the same
// name), B starts again over its directory and matches the catalog.
func TestRestartConverges(t *testing.T) {
	srv, a, b, _ := two(t)
	create(t, a, "kept", 1, nil)
	create(t, a, "deleted", 2, nil)
	old := create(t, a, "recreated", 1, nil)
	settle(t, srv, a, b)
	same(t, "deleted", a, b)

	b.stop()
	create(t, a, "new", 2, map[string]string{"retention.ms": "1000"})
	if err := a.cat.AlterTopicConfigs("kept", map[string]string{"segment.ms": "9000"}, false); err != nil {
		t.Fatal(err)
	}
	if err := a.cat.CreatePartitions("kept", 3, false); err != nil {
		t.Fatal(err)
	}
	if err := a.cat.DeleteTopic("deleted"); err != nil {
		t.Fatal(err)
	}
	if err := a.cat.DeleteTopic("recreated"); err != nil {
		t.Fatal(err)
	}
	create(t, a, "recreated", 3, nil)

	b.open()
	if _, ok := b.r.Topic("deleted"); !ok {
		t.Fatal("B's directory lost the topic before the catalog started: the test shows nothing")
	}
	b.start()
	// Start returns with the catalog applied: no wait needed.
	absent(t, "deleted", b)
	for _, name := range []string{"kept", "new", "recreated"} {
		same(t, name, a, b)
	}
	if got := same(t, "recreated", a, b); got.ID == old.ID || got.Partitions != 3 {
		t.Fatalf("recreated: %+v, the old id was %s", got, old.ID)
	}
	if got := same(t, "kept", a, b); got.Partitions != 3 || got.Configs["segment.ms"] != "9000" {
		t.Fatalf("kept: %+v", got)
	}
	// And it follows later changes.
	create(t, a, "later", 1, nil)
	settle(t, srv, a, b)
	same(t, "later", a, b)
}

// TestEtcdRestart (the catalog watch): etcd restarts under running nodes. Right after
// it, before A's and B's clients are back (gRPC's reconnection backoff),
// a node C started then deletes a topic, creates one, and etcd's history
// is compacted: A's and B's watches, resuming from before, end, and they
// load again. Later changes reach everyone.
func TestEtcdRestart(t *testing.T) {
	srv, a, b, d := two(t)
	create(t, a, "before", 1, nil)
	create(t, a, "kept", 1, nil)
	settle(t, srv, a, b)
	srv.Restart()
	c := newNode(t, srv, "C", d)
	if err := c.cat.DeleteTopic("before"); err != nil {
		t.Fatal(err)
	}
	create(t, c, "during", 2, nil)
	cli := srv.Client(t)
	resp, err := cli.Get(ctxT(t), "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(ctxT(t), resp.Header.Revision); err != nil {
		t.Fatal(err)
	}
	// A change fails until A's client is back (or times out after it
	// was made: TOPIC_ALREADY_EXISTS on the retry).
	for end := time.Now().Add(deadline); ; {
		_, err := a.cat.CreateTopic("after", 2, 1, nil, false)
		if err == nil || errors.Is(err, resolver.ErrTopicExists) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("create after the restart: %v", err)
		}
	}
	if err := b.cat.IncrementalAlterTopicConfigs("kept", []topicconfig.Op{{Name: "retention.ms", Value: "1234"}}, false); err != nil {
		t.Fatal(err)
	}
	settle(t, srv, a, b, c)
	absent(t, "before", a, b, c)
	same(t, "during", a, b, c)
	same(t, "after", a, b, c)
	if got := same(t, "kept", a, b, c); got.Configs["retention.ms"] != "1234" {
		t.Fatalf("kept: %+v", got)
	}
}

// TestReloadAfterCompaction (the catalog watch): a watch behind a compaction ends; the
// catalog loads everything again, deleting what it lacks, and follows on.
func TestReloadAfterCompaction(t *testing.T) {
	srv, a, _, d := two(t)
	cli := srv.Client(t)
	resp, err := cli.Get(ctxT(t), "x")
	if err != nil {
		t.Fatal(err)
	}
	behind := resp.Header.Revision
	create(t, a, "one", 1, nil)
	create(t, a, "two", 1, nil)
	if err := a.cat.DeleteTopic("one"); err != nil {
		t.Fatal(err)
	}
	resp, err = cli.Get(ctxT(t), "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(ctxT(t), resp.Header.Revision); err != nil {
		t.Fatal(err)
	}

	// C: a node whose resolver holds a topic the catalog deleted, and
	// whose watch starts behind the compaction.
	c := &node{t: t, name: "C", dir: t.TempDir(), srv: srv, deletes: d,
		cfg: resolver.Config{NumPartitions: 1, RetentionCheckInterval: -1}}
	c.open()
	t.Cleanup(c.stop)
	if _, err := c.r.CreateTopic("one", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	c.newCatalog()
	c.cat.StartAt(behind)
	settle(t, srv, a, c)
	absent(t, "one", c)
	same(t, "two", a, c)
	create(t, a, "three", 1, nil)
	settle(t, srv, a, c)
	same(t, "three", a, c)
}

// TestWaitAppliedDeadline (waiting for the local apply): a wait for a revision never applied ends
// at the request's deadline, as Kafka's REQUEST_TIMED_OUT; Close ends it
// too.
func TestWaitAppliedDeadline(t *testing.T) {
	_, a, _, _ := two(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := a.cat.WaitApplied(ctx, a.cat.Applied()+1000); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitApplied past the deadline: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- a.cat.WaitApplied(ctxT(t), a.cat.Applied()+1000) }()
	a.cat.Close()
	select {
	case err := <-done:
		if !errors.Is(err, catalog.ErrClosed) {
			t.Fatalf("WaitApplied after Close: %v", err)
		}
	case <-ctxT(t).Done():
		t.Fatal("Close did not end the wait")
	}
}

// TestEveryEventApplied (the catalog watch): one etcd transaction that changes several
// records (one watch response with several events, as the catch-up of a
// resumed watch delivers too) is applied whole, on every node.
func TestEveryEventApplied(t *testing.T) {
	srv, a, b, _ := two(t)
	create(t, a, "old", 1, nil)
	settle(t, srv, a, b)
	cli := srv.Client(t)
	_, err := cli.Txn(ctxT(t)).Then(
		clientv3.OpPut(prefix+"topics/x", `{"id":"0102030405060708090a0b0c0d0e0f10","partitions":2}`),
		clientv3.OpPut(prefix+"topics/y", `{"id":"1102030405060708090a0b0c0d0e0f10","partitions":1,"configs":{"retention.ms":"5"}}`),
		clientv3.OpDelete(prefix+"topics/old"),
	).Commit()
	if err != nil {
		t.Fatal(err)
	}
	settle(t, srv, a, b)
	absent(t, "old", a, b)
	if got := same(t, "x", a, b); got.ID.String() != "01020304-0506-0708-090a-0b0c0d0e0f10" || got.Partitions != 2 {
		t.Fatalf("x: %+v", got)
	}
	if got := same(t, "y", a, b); got.Configs["retention.ms"] != "5" {
		t.Fatalf("y: %+v", got)
	}
	// A record that can never apply is skipped, and later ones still are.
	if _, err := cli.Put(ctxT(t), prefix+"topics/bad", `{"id":"zz","partitions":1}`); err != nil {
		t.Fatal(err)
	}
	create(t, b, "z", 1, nil)
	settle(t, srv, a, b)
	same(t, "z", a, b)
	absent(t, "bad", a, b)
}

// The creator a node records (CreateTopicBy) is in the etcd record, so
// every node's resolver has it, and a change of the record (more
// partitions, on another node) keeps it: the per-principal partition
// bound counts the topic against its creator on every node.
func TestCreatorEverywhere(t *testing.T) {
	srv, a, b, _ := two(t)
	if _, err := a.cat.CreateTopicBy("User:alice", "owned", 1, -1, nil, false); err != nil {
		t.Fatal(err)
	}
	settle(t, srv, a, b)
	same(t, "owned", a, b)
	for _, n := range []*node{a, b} {
		if got, _ := n.r.Topic("owned"); got.Creator != "User:alice" {
			t.Fatalf("%s: creator %q, want User:alice", n.name, got.Creator)
		}
	}
	if err := b.cat.CreatePartitions("owned", 3, false); err != nil {
		t.Fatal(err)
	}
	settle(t, srv, a, b)
	same(t, "owned", a, b)
	for _, n := range []*node{a, b} {
		if got, _ := n.r.Topic("owned"); got.Creator != "User:alice" || got.Partitions != 3 {
			t.Fatalf("%s after growing: %+v, want creator User:alice, 3 partitions", n.name, got)
		}
	}
}
