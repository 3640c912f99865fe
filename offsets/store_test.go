package offsets

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// clock is an injected Now for retention tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newClock() *clock { return &clock{now: time.UnixMilli(1_700_000_000_000)} }

func open(t *testing.T, dir string, opts Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func tp(topic string, p int32) TopicPartition { return TopicPartition{Topic: topic, Partition: p} }

func commit(topic string, p int32, off Offset, md string) Commit {
	return Commit{TopicPartition: tp(topic, p), Offset: off, LeaderEpoch: 3, Metadata: md}
}

func mustCommit(t *testing.T, s *Store, group string, cs ...Commit) {
	t.Helper()
	if err := s.Commit(group, cs); err != nil {
		t.Fatalf("commit %q: %v", group, err)
	}
}

func offsetsOf(t *testing.T, s *Store, group string) map[TopicPartition]Offset {
	t.Helper()
	cs, err := s.GroupOffsets(group)
	if err != nil {
		t.Fatalf("group offsets: %v", err)
	}
	out := map[TopicPartition]Offset{}
	for _, c := range cs {
		out[c.TopicPartition] = c.Offset
	}
	return out
}

// O2: a commit round-trips offset, leader epoch, metadata and commit time.
func TestCommitRoundTrip(t *testing.T) {
	clk := newClock()
	s := open(t, t.TempDir(), Options{Now: clk.Now})
	mustCommit(t, s, "g", commit("t", 0, 10, "meta-0"), commit("t", 1, 20, ""), commit("u", 0, 5, "x"))

	c, ok, err := s.Get("g", tp("t", 0))
	if err != nil || !ok {
		t.Fatalf("get: %v %v", ok, err)
	}
	want := Commit{TopicPartition: tp("t", 0), Offset: 10, LeaderEpoch: 3, Metadata: "meta-0", CommitTime: clk.Now()}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v want %+v", c, want)
	}
	if _, ok, err := s.Get("g", tp("t", 2)); ok || err != nil {
		t.Fatalf("uncommitted partition: ok=%v err=%v", ok, err)
	}
	if _, ok, _ := s.Get("other", tp("t", 0)); ok {
		t.Fatal("commit leaked into another group")
	}
	got := offsetsOf(t, s, "g")
	if !reflect.DeepEqual(got, map[TopicPartition]Offset{tp("t", 0): 10, tp("t", 1): 20, tp("u", 0): 5}) {
		t.Fatalf("group offsets %v", got)
	}
	// A later commit overwrites.
	mustCommit(t, s, "g", commit("t", 0, 11, "meta-1"))
	if c, _, _ := s.Get("g", tp("t", 0)); c.Offset != 11 || c.Metadata != "meta-1" {
		t.Fatalf("overwrite: %+v", c)
	}
}

// Group ids and topics that are prefixes of one another, or contain bytes
// used by the key encoding, never see each other's offsets.
func TestKeyIsolation(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	groups := []string{"", "a", "a\x00", "ab", "a\xff", "\xff\xff"}
	for i, g := range groups {
		mustCommit(t, s, g, commit("t", 0, Offset(i), ""), commit("t\x00", 1, Offset(100+i), ""))
	}
	for i, g := range groups {
		want := map[TopicPartition]Offset{tp("t", 0): Offset(i), tp("t\x00", 1): Offset(100 + i)}
		if got := offsetsOf(t, s, g); !reflect.DeepEqual(got, want) {
			t.Fatalf("group %q: got %v want %v", g, got, want)
		}
	}
	all, err := s.Groups()
	if err != nil || len(all) != len(groups) {
		t.Fatalf("groups %v %v", all, err)
	}
}

// O2: offsets and group metadata survive a restart; a group that was
// active without a persisted membership comes back Empty (memberships kept across restarts).
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	s, err := Open(dir, Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s, "g", commit("t", 0, 42, "m"))
	mustCommit(t, s, "simple", commit("t", 1, 7, ""))
	if err := s.PutGroup(Group{ID: "g", ProtocolType: "consumer", Protocol: "range", Generation: 5, State: GroupActive, StateTime: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutGroup(Group{ID: "nooffsets", ProtocolType: "consumer", Generation: 2, State: GroupEmpty, StateTime: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit("g", []Commit{commit("t", 0, 1, "")}); err != ErrClosed {
		t.Fatalf("commit after close: %v", err)
	}

	clk.advance(time.Hour)
	s = open(t, dir, Options{Now: clk.Now})
	if c, ok, _ := s.Get("g", tp("t", 0)); !ok || c.Offset != 42 || c.Metadata != "m" {
		t.Fatalf("after restart: %+v %v", c, ok)
	}
	groups, err := s.Groups()
	if err != nil {
		t.Fatal(err)
	}
	want := []Group{
		{ID: "g", ProtocolType: "consumer", Protocol: "range", Generation: 5, State: GroupEmpty, StateTime: clk.Now()},
		{ID: "nooffsets", ProtocolType: "consumer", Generation: 2, State: GroupEmpty, StateTime: clk.Now().Add(-time.Hour)},
		{ID: "simple", State: GroupEmpty},
	}
	if !reflect.DeepEqual(groups, want) {
		t.Fatalf("groups\n got %+v\nwant %+v", groups, want)
	}
}

// O1: a commit is synced before Commit returns: a crash right after it
// (only synced data survives) keeps every partition of the commit.
func TestCommitDurableAcrossCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s, err := Open("db", Options{PebbleFS: fs})
	if err != nil {
		t.Fatal(err)
	}
	var batch []Commit
	for p := int32(0); p < 50; p++ {
		batch = append(batch, commit("t", p, Offset(p*10), "m"))
	}
	mustCommit(t, s, "g", batch...)
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	_ = s.Close()

	s = open(t, "db", Options{PebbleFS: crashed})
	got := offsetsOf(t, s, "g")
	if len(got) != 50 {
		t.Fatalf("after crash %d offsets, want 50", len(got))
	}
	for p := int32(0); p < 50; p++ {
		if got[tp("t", p)] != Offset(p*10) {
			t.Fatalf("partition %d: %v", p, got[tp("t", p)])
		}
	}
}

// O2: DeleteGroup removes offsets and metadata; DeleteOffsets removes only
// the named partitions.
func TestDelete(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	mustCommit(t, s, "g", commit("t", 0, 1, ""), commit("t", 1, 2, ""), commit("u", 0, 3, ""))
	mustCommit(t, s, "g2", commit("t", 0, 9, ""))
	if err := s.PutGroup(Group{ID: "g", ProtocolType: "consumer"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteOffsets("g", []TopicPartition{tp("t", 1), tp("nope", 0)}); err != nil {
		t.Fatal(err)
	}
	if got := offsetsOf(t, s, "g"); !reflect.DeepEqual(got, map[TopicPartition]Offset{tp("t", 0): 1, tp("u", 0): 3}) {
		t.Fatalf("after offset delete %v", got)
	}
	if err := s.DeleteGroup("g"); err != nil {
		t.Fatal(err)
	}
	if got := offsetsOf(t, s, "g"); len(got) != 0 {
		t.Fatalf("after group delete %v", got)
	}
	groups, _ := s.Groups()
	if len(groups) != 1 || groups[0].ID != "g2" {
		t.Fatalf("groups after delete %+v", groups)
	}
}

// Retention (KIP-211) with an injected clock: consumer groups expire as a
// whole a retention period after becoming empty; offset-only groups expire
// per offset; active groups never.
func TestExpire(t *testing.T) {
	clk := newClock()
	const ret = 24 * time.Hour
	s := open(t, t.TempDir(), Options{Now: clk.Now, Retention: ret})
	start := clk.Now()

	mustCommit(t, s, "consumer", commit("t", 0, 1, ""), commit("t", 1, 1, ""))
	mustCommit(t, s, "active", commit("t", 0, 1, ""))
	mustCommit(t, s, "simple", commit("t", 0, 1, ""))
	_ = s.PutGroup(Group{ID: "consumer", ProtocolType: "consumer", State: GroupEmpty, StateTime: start.Add(time.Hour)})
	_ = s.PutGroup(Group{ID: "active", ProtocolType: "consumer", State: GroupActive, StateTime: start})
	_ = s.PutGroup(Group{ID: "bare", ProtocolType: "consumer", State: GroupEmpty, StateTime: start})
	clk.advance(12 * time.Hour)
	mustCommit(t, s, "simple", commit("t", 1, 2, "")) // committed at start+12h

	expire := func(at time.Time) []string {
		t.Helper()
		removed, err := s.Expire(at)
		if err != nil {
			t.Fatal(err)
		}
		return removed
	}
	// An empty group without offsets goes at the first check.
	if got := expire(start.Add(2 * time.Hour)); !reflect.DeepEqual(got, []string{"bare"}) {
		t.Fatalf("first check removed %v", got)
	}
	// At start+24h: simple's first offset is due; consumer (empty since
	// start+1h) is not.
	if got := expire(start.Add(ret)); len(got) != 0 {
		t.Fatalf("removed %v", got)
	}
	if got := offsetsOf(t, s, "simple"); !reflect.DeepEqual(got, map[TopicPartition]Offset{tp("t", 1): 2}) {
		t.Fatalf("simple after partial expiry %v", got)
	}
	if len(offsetsOf(t, s, "consumer")) != 2 {
		t.Fatal("consumer group expired early")
	}
	// At start+25h the consumer group is due as a whole; at start+36h simple.
	if got := expire(start.Add(ret + time.Hour)); !reflect.DeepEqual(got, []string{"consumer"}) {
		t.Fatalf("removed %v", got)
	}
	if got := expire(start.Add(ret + 12*time.Hour)); !reflect.DeepEqual(got, []string{"simple"}) {
		t.Fatalf("removed %v", got)
	}
	// The active group keeps its offsets forever.
	if got := expire(start.Add(100 * ret)); len(got) != 0 || len(offsetsOf(t, s, "active")) != 1 {
		t.Fatalf("active group expired: %v", got)
	}
	groups, _ := s.Groups()
	if len(groups) != 1 || groups[0].ID != "active" {
		t.Fatalf("groups left %+v", groups)
	}
}

// O1 under concurrency: many goroutines committing at once all land.
func TestConcurrentCommits(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				if err := s.Commit("g", []Commit{commit("t", int32(i), Offset(j), "")}); err != nil {
					t.Error(err)
				}
			}
		}(i)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for j := 0; j < 10; j++ {
			if _, err := s.Expire(time.Now()); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	got := offsetsOf(t, s, "g")
	for i := int32(0); i < 8; i++ {
		if got[tp("t", i)] != 19 {
			t.Fatalf("partition %d: %v", i, got[tp("t", i)])
		}
	}
}
