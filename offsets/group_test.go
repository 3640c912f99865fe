package offsets

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"
)

// gatedMirror is a Mirror that copies every batch it takes into replica,
// records the groups (offset commits' group ids, in batch order) of each
// call, holds its first call until release is closed, and fails the calls
// whose number (from 0) is in fail.
type gatedMirror struct {
	t       *testing.T
	replica *pebble.DB
	entered chan struct{} // closed when the first call starts
	release chan struct{}
	fail    map[int]bool

	mu    sync.Mutex
	calls [][]string
}

var errMirrorRefused = errors.New("mirror refused")

func newGatedMirror(t *testing.T, fail ...int) *gatedMirror {
	replica, err := pebble.Open(t.TempDir(), &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { replica.Close() })
	m := &gatedMirror{t: t, replica: replica, entered: make(chan struct{}), release: make(chan struct{}), fail: map[int]bool{}}
	for _, n := range fail {
		m.fail[n] = true
	}
	return m
}

func (m *gatedMirror) mirror(b *pebble.Batch) error {
	m.mu.Lock()
	n := len(m.calls)
	var groups []string
	r := batchrepr.Read(b.Repr())
	for {
		_, k, _, ok, err := r.Next()
		if err != nil {
			m.mu.Unlock()
			return err
		}
		if !ok {
			break
		}
		g, _, err := decodeOffsetKey(k)
		if err != nil {
			g = fmt.Sprintf("key %q", k)
		}
		groups = append(groups, g)
	}
	m.calls = append(m.calls, groups)
	m.mu.Unlock()
	if n == 0 {
		close(m.entered)
		<-m.release
	}
	if m.fail[n] {
		return errMirrorRefused
	}
	rb := m.replica.NewBatch()
	defer rb.Close()
	if err := rb.SetRepr(append([]byte(nil), b.Repr()...)); err != nil {
		return err
	}
	return m.replica.Apply(rb, pebble.Sync)
}

func (m *gatedMirror) groups() [][]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]string(nil), m.calls...)
}

// queued is how many writes wait for the group being mirrored.
func queued(s *Store) int {
	s.mirrorQ.mu.Lock()
	defer s.mirrorQ.mu.Unlock()
	return len(s.mirrorQ.waiting)
}

func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); queued(s) < n; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%d writes queued, want %d", queued(s), n)
		}
	}
}

// queueWrites starts a write of commits (one per partition) for each of
// groups, in order: the first is mirrored alone and held there, each
// later one is started only once the one before it is queued behind it,
// so the queue holds them in the order given. It returns their errors
// once m is released and every write returned.
func queueWrites(t *testing.T, s *Store, m *gatedMirror, groups []string, parts []int) []error {
	t.Helper()
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var cs []Commit
			for p := range parts[i] {
				cs = append(cs, commit("t", int32(p), Offset(i), ""))
			}
			errs[i] = s.Commit(g, cs)
		}()
		if i == 0 {
			<-m.entered
		} else {
			waitQueued(t, s, i)
		}
	}
	close(m.release)
	wg.Wait()
	return errs
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d", prefix, i)
	}
	return out
}

func ones(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// O8: writes queued behind a group being mirrored are mirrored together,
// one batch holding theirs in the order they were queued (the order of
// application), and applied together: the replica fed by the mirror is
// the store.
func TestMirrorGroupsQueuedWrites(t *testing.T) {
	m := newGatedMirror(t)
	s := open(t, t.TempDir(), Options{Mirror: m.mirror})
	gs := names("g", 12)
	for i, err := range queueWrites(t, s, m, gs, ones(len(gs))) {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if got, want := m.groups(), [][]string{gs[:1], gs[1:]}; !reflect.DeepEqual(got, want) {
		t.Fatalf("mirror calls %q, want the first write alone and the 11 queued behind it in one batch, in queue order %q", got, want)
	}
	if got, want := dump(t, m.replica), dump(t, s.db); !reflect.DeepEqual(got, want) {
		t.Fatalf("the replica fed by Mirror differs from the store:\nreplica %q\nstore   %q", got, want)
	}
	for _, g := range gs {
		if _, ok, err := s.Get(g, tp("t", 0)); err != nil || !ok {
			t.Fatalf("%s's acknowledged commit is not in the store (%v)", g, err)
		}
	}
}

// O8: a group whose mirror fails fails every write of it, and nothing of
// the group is applied; the group before it is not affected.
func TestMirrorGroupFailureFailsEveryWrite(t *testing.T) {
	m := newGatedMirror(t, 1)
	s := open(t, t.TempDir(), Options{Mirror: m.mirror})
	gs := names("g", 6)
	errs := queueWrites(t, s, m, gs, ones(len(gs)))
	if errs[0] != nil {
		t.Fatalf("the first write, mirrored alone: %v", errs[0])
	}
	for i, err := range errs[1:] {
		if !errors.Is(err, errMirrorRefused) {
			t.Errorf("write %d of the refused group: error %v, want the mirror's", i+1, err)
		}
	}
	if calls := m.groups(); len(calls) != 2 {
		t.Fatalf("mirror calls %q, want 2", calls)
	}
	for i, g := range gs {
		_, ok, err := s.Get(g, tp("t", 0))
		if err != nil {
			t.Fatal(err)
		}
		if ok != (i == 0) {
			t.Errorf("%s applied locally: %v, want %v", g, ok, i == 0)
		}
	}
	if got, want := dump(t, m.replica), dump(t, s.db); !reflect.DeepEqual(got, want) {
		t.Fatalf("the replica fed by Mirror differs from the store:\nreplica %q\nstore   %q", got, want)
	}
}

// O8: a group stays within Options.MirrorGroupEntries (what the mirror
// writes in one transaction); a write larger alone is mirrored alone.
func TestMirrorGroupBounds(t *testing.T) {
	m := newGatedMirror(t)
	s := open(t, t.TempDir(), Options{Mirror: m.mirror, MirrorGroupEntries: 3})
	gs := []string{"first", "a", "b", "big", "c", "d", "e", "f"}
	for i, err := range queueWrites(t, s, m, gs, []int{1, 1, 1, 5, 1, 1, 1, 1}) {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	want := [][]string{{"first"}, {"a", "b"}, {"big", "big", "big", "big", "big"}, {"c", "d", "e"}, {"f"}}
	if got := m.groups(); !reflect.DeepEqual(got, want) {
		t.Fatalf("mirror calls %q, want %q", got, want)
	}
}

// O8: a group whose mirror panics in its leader still answers the other
// writes of the group (with an error, nothing applied) and hands the
// lead on, so later writes are not stuck behind it.
func TestMirrorGroupPanicAnswersAndHandsOn(t *testing.T) {
	var calls int
	var mu sync.Mutex
	s := open(t, t.TempDir(), Options{Mirror: func(*pebble.Batch) error {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			panic("mirror panics")
		}
		return nil
	}})
	errs := make(chan error, 1)
	go func() {
		defer func() {
			if recover() == nil {
				errs <- errors.New("the leader's panic did not reach its caller")
				return
			}
			errs <- nil
		}()
		_ = s.Commit("panics", []Commit{commit("t", 0, 1, "")})
	}()
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Commit("after", []Commit{commit("t", 0, 2, "")}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("a write after the panic: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a write after a panicked group never returned: the lead was not handed on")
	}
	if _, ok, _ := s.Get("panics", tp("t", 0)); ok {
		t.Fatal("the panicked group was applied")
	}
}
