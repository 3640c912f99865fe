package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// recorder is a Replicator test double: it records every call (with
// copies of the payloads), refuses the logs in fail, and, while hold is
// set, stops in each call until the test releases it (or ends: abort).
type recorder struct {
	s       *Store // set before the first write
	entered chan struct{}
	release chan struct{}
	abort   chan struct{} // closed when the test ends: hold no more

	mu       sync.Mutex
	calls    [][]Replicated
	fail     map[LogID]error
	hold     bool
	accepted map[LogID]Offset // end of the last entry a returned call accepted
	early    []string         // entries already visible inside Replicate (I10)
}

func newRecorder() *recorder {
	return &recorder{
		entered: make(chan struct{}), release: make(chan struct{}), abort: make(chan struct{}),
		fail: map[LogID]error{}, accepted: map[LogID]Offset{},
	}
}

func (r *recorder) Replicate(es []Replicated) map[LogID]error {
	r.mu.Lock()
	call := make([]Replicated, len(es))
	for i, e := range es {
		call[i] = e
		call[i].Payload = bytes.Clone(e.Payload)
		if end := r.s.publishedEnd(e.Log); end >= e.Header.End() {
			r.early = append(r.early, fmt.Sprintf("%v %v visible (end %v) inside Replicate", e.Log, e.Header.Offset, end))
		}
	}
	r.calls = append(r.calls, call)
	hold := r.hold
	r.mu.Unlock()
	if hold {
		select {
		case r.entered <- struct{}{}:
			select {
			case <-r.release:
			case <-r.abort:
			}
		case <-r.abort:
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	errs := map[LogID]error{}
	for _, e := range es {
		if err := r.fail[e.Log]; err != nil {
			errs[e.Log] = err
			continue
		}
		r.accepted[e.Log] = e.Header.End()
	}
	return errs
}

func (r *recorder) set(f func(r *recorder)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r)
}

// snapshot returns the calls so far and the entries they held per log.
func (r *recorder) snapshot() ([][]Replicated, map[LogID][]Replicated) {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := append([][]Replicated(nil), r.calls...)
	per := map[LogID][]Replicated{}
	for _, c := range calls {
		for _, e := range c {
			per[e.Log] = append(per[e.Log], e)
		}
	}
	return calls, per
}

// publishedEnd is the log's durable end as the committer publishes it,
// read without closeMu so that the committer may call it.
func (s *Store) publishedEnd(id LogID) Offset {
	s.mu.Lock()
	l := s.mu.logs[id]
	s.mu.Unlock()
	if l == nil {
		return -1
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.end
}

// keysOf counts id's keys of one kind (prefixIndex, prefixTime) in db.
func keysOf(t *testing.T, db *pebble.DB, prefix byte, id LogID) int {
	t.Helper()
	lo, hi := logPrefixRange(prefix, id)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n
}

// stampBase writes the entry's offset into its first 8 bytes, as the Kafka
// layer stamps a batch's base offset, and returns 1000+offset as MaxTime.
func stampBase(payload []byte, base Offset) int64 {
	binary.BigEndian.PutUint64(payload, uint64(base))
	return 1000 + int64(base)
}

// stamped is payloadFor(off, n) as stampBase leaves it.
func stamped(off Offset, n int) []byte {
	p := payloadFor(off, n)
	stampBase(p, off)
	return p
}

// openReplicated opens a store with r as its Replicator. The test's
// cleanup lets a held Replicate go and closes the store, giving up after
// a deadline, so that a failed test ends instead of hanging in Close.
func openReplicated(t *testing.T, dir string, r *recorder, opts Options) *Store {
	t.Helper()
	if opts.Replicator == nil {
		opts.Replicator = r
	}
	s := newStore(t, dir, opts)
	r.s = s
	t.Cleanup(func() {
		close(r.abort)
		closed := make(chan struct{})
		go func() {
			_ = s.Close()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(30 * time.Second):
			t.Error("Close did not return")
		}
	})
	return s
}

// waitEntered waits for a held Replicate call to start.
func waitEntered(t *testing.T, r *recorder) {
	t.Helper()
	select {
	case <-r.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("Replicate was not called")
	}
}

// I10: every entry reaches Replicate once, with its log, offset, records,
// max time and stamped payload, in per-log offset order; nothing is
// visible inside Replicate, and a waiter wakes only after the call that
// held its entry returned. The segment files are not fdatasynced, and
// OnCommit still accounts for every entry.
func TestReplicatorSeesEntriesInOrder(t *testing.T) {
	g := &gateFS{FS: OSFS()}
	r := newRecorder()
	var mu sync.Mutex
	var stats CommitStats
	s := openReplicated(t, t.TempDir(), r, Options{FS: g, OnCommit: func(st CommitStats) {
		mu.Lock()
		defer mu.Unlock()
		stats.Entries += st.Entries
		stats.Bytes += st.Bytes
		stats.Files += st.Files
	}})
	if err := s.CreateLogs(1, 2); err != nil {
		t.Fatal(err)
	}
	const perLog = 20
	var wg sync.WaitGroup
	for _, id := range []LogID{1, 2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perLog {
				h, err := s.Append(id, 2, payloadFor(Offset(2*i), 64+i), AppendOptions{Stamp: stampBase})
				if err != nil {
					t.Errorf("append %v: %v", id, err)
					return
				}
				r.mu.Lock()
				acc := r.accepted[id]
				r.mu.Unlock()
				if acc < h.End() {
					t.Errorf("%v %v acknowledged before Replicate accepted it (accepted to %v)", id, h.Offset, acc)
				}
			}
		}()
	}
	wg.Wait()
	_, per := r.snapshot()
	for _, id := range []LogID{1, 2} {
		es := per[id]
		if len(es) != perLog {
			t.Fatalf("%v: %d entries replicated, want %d", id, len(es), perLog)
		}
		for i, e := range es {
			off := Offset(2 * i)
			h := e.Header
			if h.Offset != off || h.Records != 2 || h.MaxTime != 1000+int64(off) || h.Size != int32(64+i) {
				t.Fatalf("%v entry %d: header %+v", id, i, h)
			}
			if !bytes.Equal(e.Payload, stamped(off, 64+i)) {
				t.Fatalf("%v %v: payload is not the stamped one", id, off)
			}
		}
	}
	r.mu.Lock()
	early := r.early
	r.mu.Unlock()
	if len(early) > 0 {
		t.Fatalf("published before Replicate: %v", early)
	}
	if n := g.syncs.Load(); n != 0 {
		t.Fatalf("%d segment fdatasyncs with a Replicator", n)
	}
	mu.Lock()
	defer mu.Unlock()
	want := 0
	for i := range perLog {
		want += 2 * (64 + i)
	}
	if stats.Entries != 2*perLog || stats.Bytes != int64(want) || stats.Files < 2 {
		t.Fatalf("commit stats %+v, want %d entries, %d bytes", stats, 2*perLog, want)
	}
}

// I11: a log the Replicator refuses is failed: its waiters get ErrFailed
// wrapping the Replicator's error, nothing of it is indexed or visible (in
// the live store and in its index after Close), later writes fail the same
// way and never reach the Replicator (nor do writes queued before the
// refusal, I11: a failed log is never replicated), while the other log of the same
// group is acknowledged. Deleting the log ends the failure.
func TestReplicatorFailsRefusedLog(t *testing.T) {
	dir := t.TempDir()
	r := newRecorder()
	s := openReplicated(t, dir, r, Options{})
	if err := s.CreateLogs(1, 2, 3); err != nil {
		t.Fatal(err)
	}
	for _, id := range []LogID{1, 2} {
		if _, err := s.Append(id, 1, payloadFor(0, 10), AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	notLeader := fmt.Errorf("%w: epoch 7", ErrNotLeader)
	r.set(func(r *recorder) { r.hold, r.fail[2] = true, notLeader })
	// Hold one group so that the writes to logs 1 and 2 share the next.
	if _, err := s.Write(3, 1, payloadFor(0, 10), AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEntered(t, r)
	var p1, p2 []*Pending
	for i := range 3 {
		a, err := s.Write(1, 1, payloadFor(Offset(1+i), 10), AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Write(2, 1, payloadFor(Offset(1+i), 10), AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p1, p2 = append(p1, a), append(p2, b)
	}
	r.release <- struct{}{} // the log 3 group
	waitEntered(t, r)       // the group of logs 1 and 2
	// Queued behind the refused group: failed before its commit, so never
	// replicated.
	late, err := s.Write(2, 1, payloadFor(4, 10), AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.set(func(r *recorder) { r.hold = false })
	r.release <- struct{}{}
	for _, p := range p1 {
		if err := p.Wait(); err != nil {
			t.Fatalf("log 1 in the refused log's group: %v", err)
		}
	}
	for _, p := range append(p2, late) {
		err := p.Wait()
		if !errors.Is(err, ErrFailed) || !errors.Is(err, ErrNotLeader) {
			t.Fatalf("refused entry: %v, want ErrFailed and ErrNotLeader", err)
		}
	}
	calls, _ := r.snapshot()
	if last := calls[len(calls)-1]; len(last) != 6 {
		t.Fatalf("logs 1 and 2 did not share a group: last call %d entries", len(last))
	}
	if b, _ := s.Bounds(1); b.End != 4 {
		t.Fatalf("log 1 end %v, want 4", b.End)
	}
	if b, _ := s.Bounds(2); b.End != 1 {
		t.Fatalf("refused log's end moved to %v", b.End)
	}
	if es, err := s.ReadEntries(2, 0, 0, 0); err != nil || len(es) != 1 {
		t.Fatalf("refused log reads %d entries, %v; want 1", len(es), err)
	}
	if n := keysOf(t, s.db, prefixIndex, 2); n != 1 {
		t.Fatalf("refused log has %d index entries, want 1", n)
	}
	_, err = s.Append(2, 1, payloadFor(9, 10), AppendOptions{})
	if !errors.Is(err, ErrFailed) || !errors.Is(err, ErrNotLeader) {
		t.Fatalf("append to the refused log: %v", err)
	}
	if _, per := r.snapshot(); len(per[2]) != 4 { // its first entry, then the refused three
		t.Fatalf("refused log reached Replicate %d times, want 4", len(per[2]))
	}
	if _, err := s.Append(1, 1, payloadFor(4, 10), AppendOptions{}); err != nil {
		t.Fatalf("other log after the refusal: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if h, ok, err := ro.lastIndexed(2); err != nil || !ok || h.End() != 1 {
		t.Fatalf("after close the refused log's index ends at %v (%v, %v), want 1", h.End(), ok, err)
	}
	if h, ok, err := ro.lastIndexed(1); err != nil || !ok || h.End() != 5 {
		t.Fatalf("after close log 1's index ends at %v (%v, %v), want 5", h.End(), ok, err)
	}
}

// I11: deleting a refused log ends its failure: a new log of the same id
// takes and replicates appends again.
func TestReplicatorRefusedLogDeleted(t *testing.T) {
	r := newRecorder()
	s := openReplicated(t, t.TempDir(), r, Options{})
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	r.set(func(r *recorder) { r.fail[1] = ErrNotLeader })
	if _, err := s.Append(1, 1, payloadFor(0, 10), AppendOptions{}); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("refused append: %v", err)
	}
	if err := s.DeleteLog(1); err != nil {
		t.Fatal(err)
	}
	r.set(func(r *recorder) { delete(r.fail, 1) })
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	if h, err := s.Append(1, 1, payloadFor(0, 10), AppendOptions{}); err != nil || h.Offset != 0 {
		t.Fatalf("append to the new log: %v %v", h, err)
	}
}

// I12: NoReplicate entries never reach the Replicator, are acknowledged
// and readable; the log's other entries are replicated as usual.
func TestNoReplicateSkipsReplicator(t *testing.T) {
	r := newRecorder()
	s := openReplicated(t, t.TempDir(), r, Options{})
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	// Written together, so that one group holds both kinds.
	var ps []*Pending
	for i := range 4 {
		p, err := s.Write(1, 1, payloadFor(Offset(i), 50), AppendOptions{NoReplicate: i < 3})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	for _, p := range ps {
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	_, per := r.snapshot()
	if es := per[1]; len(es) != 1 || es[0].Header.Offset != 3 {
		t.Fatalf("replicated %d entries (%+v), want only offset 3", len(es), es)
	}
	es, err := s.ReadEntries(1, 0, 0, 0)
	if err != nil || len(es) != 4 {
		t.Fatalf("read %d entries, %v", len(es), err)
	}
	for i, e := range es {
		if !bytes.Equal(e.Payload, payloadFor(Offset(i), 50)) {
			t.Fatalf("entry %d payload differs", i)
		}
	}
}

// I13: with a commit interval, writes that arrive while the committer
// waits share one group commit: one Replicate call for all of them.
func TestCommitIntervalSharesCommits(t *testing.T) {
	r := newRecorder()
	// Generous: the writers below only need to write within it.
	s := openReplicated(t, t.TempDir(), r, Options{CommitInterval: 2 * time.Second})
	const writers = 8
	ids := make([]LogID, writers)
	for i := range ids {
		ids[i] = LogID(i + 1)
	}
	if err := s.CreateLogs(ids...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(1, 1, payloadFor(0, 10), AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Append(id, 1, payloadFor(1, 10), AppendOptions{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	calls, _ := r.snapshot()
	if len(calls) != 2 || len(calls[1]) != writers {
		sizes := []int{}
		for _, c := range calls {
			sizes = append(sizes, len(c))
		}
		t.Fatalf("%d entries in Replicate calls of %v entries, want [1 %d]", 1+writers, sizes, writers)
	}
}

// I13: Close ends the wait for the commit interval at once and drains the
// queue in groups bounded by MaxGroupBytes, each acknowledged.
func TestCommitIntervalCloseDrains(t *testing.T) {
	r := newRecorder()
	s := openReplicated(t, t.TempDir(), r, Options{CommitInterval: time.Hour, MaxGroupBytes: 500})
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(1, 1, payloadFor(0, 100), AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	// The committer now waits an hour; these queue behind it.
	var ps []*Pending
	for i := range 20 {
		p, err := s.Write(1, 1, payloadFor(Offset(1+i), 100), AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close waited for the commit interval (I13)")
	}
	for _, p := range ps {
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	calls, _ := r.snapshot()
	if len(calls) != 5 {
		t.Fatalf("%d Replicate calls, want 1 + 4 groups of 500 bytes", len(calls))
	}
	for _, c := range calls[1:] {
		if len(c) != 5 {
			t.Fatalf("a drained group of %d entries, want 5 (MaxGroupBytes)", len(c))
		}
	}
}

// I10: while Replicate runs, its entries are neither acknowledged nor
// visible, and writers keep queuing; they are answered once it returns.
func TestBlockedReplicateHoldsAcks(t *testing.T) {
	r := newRecorder()
	s := openReplicated(t, t.TempDir(), r, Options{})
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	r.set(func(r *recorder) { r.hold = true })
	p, err := s.Write(1, 1, payloadFor(0, 10), AppendOptions{Retain: true})
	if err != nil {
		t.Fatal(err)
	}
	waitEntered(t, r)
	q, err := s.Write(1, 1, payloadFor(1, 10), AppendOptions{Retain: true})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
		t.Fatal("acknowledged while Replicate runs")
	default:
	}
	if b, _ := s.Bounds(1); b.End != 0 {
		t.Fatalf("end %v while Replicate runs", b.End)
	}
	if es, err := s.ReadEntries(1, 0, 0, 0); len(es) != 0 {
		t.Fatalf("read %d entries (%v) while Replicate runs", len(es), err)
	}
	r.release <- struct{}{}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	waitEntered(t, r) // q's group
	r.set(func(r *recorder) { r.hold = false })
	r.release <- struct{}{}
	if err := q.Wait(); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.Bounds(1); b.End != 2 {
		t.Fatalf("end %v, want 2", b.End)
	}
}

// I13: without a Replicator the commit interval is ignored: appends one
// after another are answered at once, not an interval apart.
func TestCommitIntervalNeedsReplicator(t *testing.T) {
	s := newStore(t, t.TempDir(), Options{CommitInterval: time.Hour})
	defer s.Close()
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for i := range 3 {
			if _, err := s.Append(1, 1, payloadFor(Offset(i), 10), AppendOptions{}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("appends without a Replicator waited for the commit interval")
	}
}
