package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/kgateway/kgateway/storage"
)

// build3x2 writes three ledgers of three 2-record entries: offsets 0–17,
// entry k at offset 2k with payload "e<k>".
func build3x2(e *env) {
	e.t.Helper()
	for l := range 3 {
		if l > 0 {
			e.roll()
		}
		for i := range 3 {
			e.append(fmt.Sprintf("e%d", 3*l+i), 2)
		}
	}
}

// offsets renders entries as their offsets, for comparisons.
func offsets(es []Entry) string {
	s := ""
	for _, e := range es {
		s += fmt.Sprintf("%d ", e.Offset)
	}
	return s
}

// TestReadFrom: the cursorless read returns the snapshot it read under and
// the entries from the one holding the offset (R2), across ledgers (R6),
// up to the snapshot's end (R8), the inclusive max (R7) and the limits
// (R9, the first entry whole); an offset at or past the end reads nothing
// and is no error (R5), nor one below the start (R3).
func TestReadFrom(t *testing.T) {
	e := newEnv(t, Config{})
	build3x2(e)
	for _, phase := range []string{"warm", "cold"} {
		for _, tc := range []struct {
			from           Offset
			maxEnt, maxByt int
			want           string
		}{
			{0, 100, 1 << 20, "0 2 4 6 8 10 12 14 16 "}, // across every ledger
			{3, 100, 1 << 20, "2 4 6 8 10 12 14 16 "},   // inside an entry: the entry holding it
			{5, 2, 1 << 20, "4 6 "},                     // maxEntries, across a ledger boundary
			{5, 100, 0, "4 "},                           // maxBytes 0: exactly the first entry, whole
			{5, 100, 3, "4 "},                           // the second would pass maxBytes
			{5, 100, 4, "4 6 "},
			{17, 100, 1 << 20, "16 "},
			{18, 100, 1 << 20, ""}, // the end
			{40, 100, 1 << 20, ""}, // past it
		} {
			sn, es, err := e.m.ReadEntries(Committed, tc.from, NoLimit, tc.maxEnt, tc.maxByt, nil)
			if err != nil || sn != (Snapshot{Start: 0, End: 18}) || offsets(es) != tc.want {
				t.Fatalf("%s: ReadFrom(%d, %d, %d) = %+v, %q, %v; want %q", phase, tc.from, tc.maxEnt, tc.maxByt, sn, offsets(es), err, tc.want)
			}
		}
		e.reopen()
	}
	if err := e.store.SoftTrim(testLog, 5); err != nil {
		t.Fatal(err)
	}
	// R3: below the start (trimmed away) nothing is read; the snapshot
	// lets the caller judge the offset (the log start check).
	if sn, es, err := e.m.ReadEntries(Committed, 3, NoLimit, 100, 1<<20, nil); err != nil || len(es) != 0 || sn.Start != 5 {
		t.Fatalf("below the start: %+v, %q, %v", sn, offsets(es), err)
	}
	for _, tc := range []struct { // R4, R7
		from, max Offset
		want      string
	}{
		{Earliest, NoLimit, "4 6 8 10 12 14 16 "},
		{Earliest, Earliest, "4 "}, // the first available entry
		{Latest, NoLimit, ""},
		{6, 10, "6 8 10 "}, // inclusive: the entry holding 10 starts at it
		{6, 11, "6 8 10 "}, // the entry holding 11 starts at 10
		{6, 9, "6 8 "},
		{6, 5, ""}, // before the start
		{7, 6, "6 "},
	} {
		if _, es, err := e.m.ReadEntries(Committed, tc.from, tc.max, 100, 1<<20, nil); err != nil || offsets(es) != tc.want {
			t.Fatalf("ReadEntries(%v, max %v) = %q, %v; want %q", tc.from, tc.max, offsets(es), err, tc.want)
		}
	}
	if _, es, err := e.m.ReadEntries(Committed, 5, NoLimit, 1, 1<<20, nil); err != nil || offsets(es) != "4 " {
		t.Fatalf("at the start, inside an entry: %q, %v", offsets(es), err)
	}
	if _, _, err := e.m.ReadEntries(Committed, 5, NoLimit, 0, 1, nil); !errors.Is(err, ErrInvalid) { // R11
		t.Fatalf("maxEntries 0: %v", err)
	}
	if _, _, err := e.m.ReadEntries(Committed, 5, NoLimit, 1, -1, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("maxBytes -1: %v", err)
	}
	if err := e.m.Fence(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.m.ReadEntries(Committed, 5, NoLimit, 1, 1, nil); !errors.Is(err, ErrFenced) {
		t.Fatalf("fenced: %v", err)
	}
	if err := e.m.Activate(); err != nil {
		t.Fatal(err)
	}
	e.m.Close()
	if _, _, err := e.m.ReadEntries(Committed, 5, NoLimit, 1, 1, nil); !errors.Is(err, ErrFenced) || !errors.Is(err, ErrClosed) {
		t.Fatalf("closed: %v", err)
	}
}

// TestReadFromWritesNothing: R1 for the read by offset, warm and cold.
func TestReadFromWritesNothing(t *testing.T) {
	e := newEnv(t, Config{})
	build3x2(e)
	for _, phase := range []string{"warm", "cold"} {
		if err := e.store.ApplyMeta(storage.MetaOp{Key: []byte("ledger-test/quiesce"), Value: []byte(phase)}); err != nil {
			t.Fatal(err)
		}
		waitIndexSettled(t, e.dir)
		files0, store0 := dirState(t, e.dir), storeState(t, e.store)
		fsMut0, pebbleMut0 := e.fs.mutations.Load(), e.pebble.Load()
		for i := range 200 {
			if _, _, err := e.m.ReadEntries(Committed, Offset(i%20), NoLimit, 1+i%5, i%7, nil); err != nil {
				t.Fatalf("%s: read %d: %v", phase, i, err)
			}
		}
		if n := e.fs.mutations.Load() - fsMut0; n != 0 {
			t.Errorf("%s: reads made %d mutating segment-file calls", phase, n)
		}
		if n := e.pebble.Load() - pebbleMut0; n != 0 {
			t.Errorf("%s: reads made %d mutating pebble file calls", phase, n)
		}
		for _, d := range diffStates(files0, dirState(t, e.dir)) {
			t.Errorf("%s: file changed by reads: %s", phase, d)
		}
		if got := storeState(t, e.store); got != store0 {
			t.Errorf("%s: store state changed by reads", phase)
		}
		e.reopen()
	}
}

// trimBeforeRead is a target that runs a hard trim once, after the read
// was planned and before its payloads are read: the race a read's retry
// is for.
type trimBeforeRead struct {
	inner target
	trim  func()
}

func (t *trimBeforeRead) read(c candidate, hdrs []storage.EntryHeader) ([]Entry, error) {
	if t.trim != nil {
		t.trim()
		t.trim = nil
	}
	return t.inner.read(c, hdrs)
}

// TestReadFromRetriesAfterTrim: a hard trim that removes the planned
// ledger before its file is read makes the read start again from a fresh
// snapshot, which then reports the new start (the caller's log start check), not an
// error, and reads nothing below it (R3).
func TestReadFromRetriesAfterTrim(t *testing.T) {
	e := newEnv(t, Config{})
	build3x2(e)
	e.reopen() // nothing in memory: payloads come from the files
	ids := e.ledgerIDs()
	start := e.info().Ledgers[1].FirstOffset
	e.m.dispatch.local = &trimBeforeRead{inner: e.m.dispatch.local, trim: func() {
		if err := e.store.HardTrim(testLog, start); err != nil {
			t.Error(err)
		}
	}}
	sn, es, err := e.m.ReadEntries(Committed, 0, NoLimit, 100, 1<<20, nil)
	if err != nil || len(es) != 0 || sn.Start != start || sn.End != 18 {
		t.Fatalf("read across a hard trim of %v: %+v, %q, %v; want start %v and nothing", ids[0], sn, offsets(es), err, start)
	}
	if n := e.m.readRetries.Load(); n != 1 {
		t.Fatalf("%d retries, want 1", n)
	}
	if _, es, err := e.m.ReadEntries(Committed, start, NoLimit, 100, 1<<20, nil); err != nil || offsets(es) != "6 8 10 12 14 16 " {
		t.Fatalf("read from the new start: %q, %v", offsets(es), err)
	}
}

// TestReconfigure: a new roll policy applies from the next append, on
// the same open ledger.
func TestReconfigure(t *testing.T) {
	e := newEnv(t, Config{})
	e.append("first", 1)
	e.append("second", 1)
	if n := len(e.ledgerIDs()); n != 1 {
		t.Fatalf("%d ledgers before", n)
	}
	if err := e.m.Reconfigure(Config{SegmentBytes: 1, Now: e.clock.Now}); err != nil {
		t.Fatal(err)
	}
	if got := e.m.Config().SegmentBytes; got != 1 {
		t.Fatalf("SegmentBytes %d after Reconfigure", got)
	}
	e.append("third", 1)
	if n := len(e.ledgerIDs()); n != 2 {
		t.Fatalf("%d ledgers after an append past the new SegmentBytes, want 2", n)
	}
	if err := e.m.Reconfigure(Config{SegmentBytes: -1}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("invalid config: %v", err)
	}
}

// TestReadFromConcurrent runs reads by offset against a writer that rolls
// often and trims behind itself. Every read answers under its snapshot: no
// error, and either nothing (from outside [Start, End)) or a dense run of
// entries from the one holding from, all below End, each carrying its own
// offset.
func TestReadFromConcurrent(t *testing.T) {
	e := newEnv(t, Config{SegmentBytes: 5 * (frameOverhead + 8)})
	const total = 400
	stamp := storage.AppendOptions{Stamp: func(p []byte, base Offset) int64 {
		binary.BigEndian.PutUint64(p, uint64(base))
		return 0
	}}
	var wg sync.WaitGroup
	writerDone := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(writerDone)
		for i := range total {
			if _, err := e.m.Append(1, make([]byte, 8), stamp); err != nil {
				t.Errorf("append: %v", err)
				return
			}
			if i%50 == 49 {
				if err := e.store.SoftTrim(testLog, Offset(i-20)); err != nil {
					t.Errorf("soft trim: %v", err)
				}
				if err := e.store.HardTrim(testLog, Offset(i-20)); err != nil {
					t.Errorf("hard trim: %v", err)
				}
			}
		}
	}()
	for r := range 2 {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 9))
			for {
				select {
				case <-writerDone:
					return
				default:
				}
				from := Offset(rng.IntN(total))
				sn, es, err := e.m.ReadEntries(Committed, from, NoLimit, 1+rng.IntN(30), rng.IntN(300), nil)
				if err == nil {
					err = checkReadFrom(sn, from, es)
				}
				if err != nil {
					t.Errorf("ReadFrom(%v): %v", from, err)
					return
				}
			}
		}(uint64(r))
	}
	wg.Wait()
	t.Logf("reads started again after a concurrent trim: %d", e.m.readRetries.Load())
}

// checkReadFrom checks one ReadFrom result against its snapshot.
func checkReadFrom(sn Snapshot, from Offset, es []Entry) error {
	inside := from >= sn.Start && from < sn.End // R3, R5
	switch {
	case inside != (len(es) > 0):
		return fmt.Errorf("%d entries for %v in [%v, %v)", len(es), from, sn.Start, sn.End)
	case !inside:
		return nil
	case es[0].Offset > from || es[0].End() <= from:
		return fmt.Errorf("first entry [%v, %v) does not hold %v", es[0].Offset, es[0].End(), from)
	case es[len(es)-1].Offset >= sn.End:
		return fmt.Errorf("entry at %v at or past the snapshot's end %v", es[len(es)-1].Offset, sn.End)
	}
	return checkDense(es)
}
