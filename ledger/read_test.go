package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage"
)

// build3 writes three ledgers of three entries each (offsets 0..8) and
// returns the ledger ids.
func build3(e *env) []LedgerID {
	e.t.Helper()
	for l := 0; l < 3; l++ {
		if l > 0 {
			e.roll()
		}
		for i := 0; i < 3; i++ {
			e.append(fmt.Sprintf("p%d%d", l, i), 1)
		}
	}
	return e.ledgerIDs()
}

// TestReadWritesNothing proves R1: any number of reads of every kind leave
// the data directory (bytes, sizes, mtimes), pebble's whole keyspace (every
// prefix, the memtable included, so an unsynced write still in the WAL
// buffer shows) and the in-memory state exactly as they were, make no
// mutating call on either file system (an open of an existing file for
// writing counts), and return what a model of the read contract says.
func TestReadWritesNothing(t *testing.T) {
	e := newEnv(t, Config{})
	var all []Entry // every entry appended, in order; the model's data
	add := func(payload string, records int) {
		h := e.append(payload, records)
		all = append(all, Entry{EntryHeader: h, Payload: []byte(payload)})
	}
	for l := 0; l < 3; l++ {
		if l > 0 {
			e.roll()
		}
		for i := 0; i < 3; i++ {
			add(fmt.Sprintf("p%d%d", l, i), 1)
		}
	}
	ids := e.ledgerIDs()
	e.roll() // an open ledger at the end
	if err := e.store.SoftTrim(testLog, 1); err != nil {
		t.Fatal(err)
	}
	all = all[1:] // offset 0 is trimmed away
	add("tail", 2)

	type call struct {
		from, max        Offset
		maxEntries, maxB int
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// Below the start (trimmed), inside every ledger, at and past the end.
	starts := []Offset{Earliest, Latest, 0, 1, 3, 4, 8, 9, 11, 40}
	var calls []call
	for i := 0; i < 300; i++ {
		calls = append(calls, call{
			from:       starts[rng.IntN(len(starts))],
			max:        []Offset{NoLimit, Earliest, 4, 0, 9}[rng.IntN(5)],
			maxEntries: 1 + rng.IntN(12),
			maxB:       rng.IntN(40),
		})
	}
	reads := 0
	check := func(phase string) {
		// Every append has returned; storage commits the entry index to
		// pebble without a sync, so a synced metadata write flushes pebble's
		// WAL buffer too. Then the store is quiescent.
		if err := e.store.ApplyMeta(storage.MetaOp{Key: []byte("ledger-test/quiesce"), Value: []byte(phase)}); err != nil {
			t.Fatal(err)
		}
		waitIndexSettled(t, e.dir)
		files0, store0, keys0 := dirState(t, e.dir), storeState(t, e.store), keyspace(t, e.store)
		fsMut0, pebbleMut0, wal0 := e.fs.mutations.Load(), e.pebble.Load(), e.store.IndexWrites()
		sn0, err := e.m.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range calls {
			sn, got, err := e.m.ReadEntries(Committed, c.from, c.max, c.maxEntries, c.maxB, nil)
			if err != nil {
				t.Fatalf("%s: read %d: %v", phase, i, err)
			}
			reads++
			if want := modelRead(all, sn0.Start, c.from, c.maxEntries, c.maxB, c.max); payloads(got) != payloads(want) || sn != sn0 {
				t.Errorf("%s: ReadEntries(%v, %d, %d, %v) = %+v %s, want %+v %s", phase, c.from, c.maxEntries, c.maxB, c.max, sn, payloads(got), sn0, payloads(want))
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
			t.Errorf("%s: store state changed by reads:\nbefore:\n%s\nafter:\n%s", phase, store0, got)
		}
		if n := e.store.IndexWrites() - wal0; n != 0 {
			t.Errorf("%s: reads wrote %d bytes to pebble's WAL", phase, n)
		}
		for _, d := range diffStates(keys0, keyspace(t, e.store)) {
			t.Errorf("%s: pebble key changed by reads: %s", phase, d)
		}
		if sn, err := e.m.Snapshot(); err != nil || sn != sn0 {
			t.Errorf("%s: snapshot moved %+v -> %+v (%v)", phase, sn0, sn, err)
		}
	}
	check("warm")
	e.reopen() // cold: every payload comes from the files
	check("cold")
	if reads != 2*len(calls) {
		t.Fatalf("%d reads checked, want %d", reads, 2*len(calls))
	}

	// The instruments are live: an append and a roll register on both file
	// systems and in the keyspace, and so does opening an existing file
	// for writing.
	fsMut, pebbleMut, keys, wal := e.fs.mutations.Load(), e.pebble.Load(), keyspace(t, e.store), e.store.IndexWrites()
	e.append("x", 1)
	e.roll()
	if e.fs.mutations.Load() == fsMut || e.pebble.Load() == pebbleMut || len(diffStates(keys, keyspace(t, e.store))) == 0 || e.store.IndexWrites() == wal {
		t.Fatalf("an append made no mutation the test can see: fs %d->%d pebble %d->%d",
			fsMut, e.fs.mutations.Load(), pebbleMut, e.pebble.Load())
	}
	fsMut = e.fs.mutations.Load()
	seg := filepath.Join(e.dir, "segments", storage.SegmentFileName(testLog, ids[0]))
	f, err := e.fs.OpenFile(seg, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if e.fs.mutations.Load() == fsMut {
		t.Fatalf("opening an existing segment file for writing was not counted")
	}
}

// modelRead is the read contract (R2-R9) over the list of every visible
// entry, in order, written independently of the code under test: the
// entries from the first that ends past from (the one holding it, or the
// first after a gap), each starting at or before max; nothing from below
// the log start but from Earliest.
func modelRead(all []Entry, start, from Offset, maxEntries, maxBytes int, max Offset) []Entry {
	if from < start && from != Earliest { // R3
		return nil
	}
	i := 0
	for i < len(all) && all[i].End() <= from { // R2, R3, R4, R5
		i++
	}
	if max == Earliest && len(all) > 0 { // R7: the first available entry
		max = all[0].Offset
	}
	var out []Entry
	bytes := 0
	for ; i < len(all) && len(out) < maxEntries; i++ {
		if all[i].Offset > max { // R7, inclusive
			break
		}
		if len(out) > 0 && bytes+len(all[i].Payload) > maxBytes { // R9
			break
		}
		bytes += len(all[i].Payload)
		out = append(out, all[i])
	}
	return out
}

// waitIndexSettled waits until pebble has finished deleting the files its
// Open made obsolete. pebble.Open hands them (the previous OPTIONS file,
// the WAL it replayed and flushed) to a background cleaner and returns
// without waiting, so right after storage.Open they can vanish at any
// moment: a baseline taken before that would blame the reads for
// pebble's own housekeeping. Once settled, the index directory holds one
// OPTIONS file and one WAL (these tests never fill a memtable, so the WAL
// never rotates).
func waitIndexSettled(t *testing.T, dir string) {
	t.Helper()
	index := filepath.Join(dir, "index")
	deadline := time.Now().Add(30 * time.Second)
	for {
		ents, err := os.ReadDir(index)
		if err != nil {
			t.Fatal(err)
		}
		var options, wals []string
		for _, d := range ents {
			switch name := d.Name(); {
			case strings.HasPrefix(name, "OPTIONS-"):
				options = append(options, name)
			case strings.HasSuffix(name, ".log"):
				wals = append(wals, name)
			}
		}
		if len(options) == 1 && len(wals) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pebble never deleted its obsolete files: OPTIONS %v, WALs %v", options, wals)
		}
		time.Sleep(time.Millisecond) // poll interval of a condition wait
	}
}

// TestReadPinsAgainstHardTrim: a hard trim landing while a read is inside
// a ledger does not break the read (the read pinned the file), the file
// goes once the read is done, and a later read starting in the removed
// ledger reads nothing (R3: it is below the log start).
func TestReadPinsAgainstHardTrim(t *testing.T) {
	e := newEnv(t, Config{})
	ids := build3(e)
	e.reopen()
	first := storage.SegmentFileName(testLog, ids[0])
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e.fs.setReadHook(func(base string) {
		if base == first {
			once.Do(func() { close(entered); <-release })
		}
	})
	done := make(chan []Entry, 1)
	go func() {
		_, es, err := e.m.ReadEntries(Committed, Earliest, NoLimit, 100, 1<<20, nil)
		if err != nil {
			t.Errorf("read: %v", err)
		}
		done <- es
	}()
	<-entered
	if err := e.store.HardTrim(testLog, 3); err != nil {
		close(release)
		t.Fatal(err)
	}
	if got := e.ledgerIDs(); len(got) != 2 || got[0] != ids[1] {
		close(release)
		t.Fatalf("ledgers after hard trim %v, want %v", got, ids[1:])
	}
	if !fileExists(t, e.dir, first) {
		close(release)
		t.Fatalf("%s removed while a read had it pinned", first)
	}
	close(release)
	es := <-done
	e.fs.setReadHook(nil)
	if len(es) != 9 {
		t.Fatalf("read across a hard trim returned %s, want all 9 entries", payloads(es))
	}
	if fileExists(t, e.dir, first) {
		t.Fatalf("%s still there after the read released it", first)
	}
	if es := e.read(1, 1, 0, NoLimit); len(es) != 0 {
		t.Fatalf("read at offset 1 of removed %v gave %s, want nothing", ids[0], payloads(es))
	}
}

// fileExists reports whether a file named base is anywhere under dir.
func fileExists(t *testing.T, dir, base string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == base {
			found = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestReadUnchangedByLaterAppends: R8, a result is not changed by appends,
// rolls or trims after it returned; and a repeated read returns the same.
func TestReadUnchangedByLaterAppends(t *testing.T) {
	e := newEnv(t, Config{})
	build3(e)
	first := e.read(Earliest, 100, 1<<20, NoLimit)
	snapshot := payloads(first)
	copies := make([][]byte, len(first))
	for i, en := range first {
		copies[i] = bytes.Clone(en.Payload)
	}
	e.append("later1", 1)
	e.roll()
	e.append("later2", 1)
	if err := e.store.SoftTrim(testLog, 2); err != nil {
		t.Fatal(err)
	}
	if got := payloads(first); got != snapshot {
		t.Fatalf("earlier result changed:\nbefore %s\nafter  %s", snapshot, got)
	}
	for i, en := range first {
		if !bytes.Equal(en.Payload, copies[i]) {
			t.Fatalf("entry %d payload changed", i)
		}
	}
	if n := len(first); n != 9 {
		t.Fatalf("read %d entries, want 9", n)
	}
}

// TestReadStopsAtLastConfirmedWhenCalled: R8 with appends landing while
// the read is in progress. The read is held inside its first file read
// while three entries are appended and made durable; it must not return
// them.
func TestReadStopsAtLastConfirmedWhenCalled(t *testing.T) {
	e := newEnv(t, Config{})
	ids := build3(e)
	e.reopen() // nothing cached: the read goes to the files
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e.fs.setReadHook(func(base string) {
		if base == storage.SegmentFileName(testLog, ids[0]) {
			once.Do(func() { close(entered); <-release })
		}
	})
	type result struct {
		es  []Entry
		err error
	}
	done := make(chan result, 1)
	go func() {
		_, es, err := e.m.ReadEntries(Committed, Earliest, NoLimit, 100, 1<<20, nil)
		done <- result{es, err}
	}()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("read never reached the segment file")
	}
	appended := make(chan error, 1)
	go func() {
		for i := 0; i < 3; i++ {
			if _, err := e.m.Append(1, []byte("during"), storage.AppendOptions{}); err != nil {
				appended <- err
				return
			}
		}
		appended <- nil
	}()
	select {
	case err := <-appended:
		if err != nil {
			close(release)
			t.Fatalf("append during read: %v", err)
		}
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("appends blocked behind a read in progress")
	}
	close(release)
	r := <-done
	e.fs.setReadHook(nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.es) != 9 {
		t.Fatalf("read returned %d entries (%s), want the 9 confirmed when it was called", len(r.es), payloads(r.es))
	}
	if got := len(e.read(Earliest, 100, 1<<20, NoLimit)); got != 12 {
		t.Fatalf("a later read sees %d entries, want 12", got)
	}
}

// TestReadSeesOnlyDurable: R5, R8 and D5. An entry written but
// not yet synced is beyond the last confirmed entry: no read returns it, a
// start at its position is empty, and it appears once its sync is done.
func TestReadSeesOnlyDurable(t *testing.T) {
	e := newEnv(t, Config{})
	h0 := e.append("durable", 1)
	syncing, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e.fs.setSyncHook(func() { once.Do(func() { close(syncing); <-release }) })
	p, err := e.m.Write(1, []byte("pending"), storage.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-syncing:
	case <-time.After(30 * time.Second):
		t.Fatal("the group commit never synced")
	}
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	pos := p.Header().Offset
	if sn, err := e.m.Snapshot(); err != nil || sn.End != h0.End() {
		t.Fatalf("snapshot %+v (%v) while the second entry is unsynced, want end %v", sn, err, h0.End())
	}
	if got := payloads(e.read(Earliest, 10, 1<<20, NoLimit)); !strings.HasSuffix(got, "=durable") || strings.Contains(got, "pending") {
		t.Fatalf("read before the sync: %s", got)
	}
	if es := e.read(pos, 10, 1<<20, NoLimit); len(es) != 0 {
		t.Fatalf("read at the unsynced position %v: %s", pos, payloads(es))
	}
	close(release)
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	e.fs.setSyncHook(nil)
	if es := e.read(pos, 10, 1<<20, NoLimit); len(es) != 1 || string(es[0].Payload) != "pending" {
		t.Fatalf("read at %v after the sync: %s", pos, payloads(es))
	}
}

// TestReadFencedUnderneath: R11 when the log is fenced in storage by
// someone else (the scale-out single-writer guard), not through Managed.
func TestReadFencedUnderneath(t *testing.T) {
	e := newEnv(t, Config{})
	e.append("a", 1)
	if err := e.store.Fence(testLog); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.m.ReadEntries(Committed, Earliest, NoLimit, 1, 1, nil); !errors.Is(err, ErrFenced) {
		t.Fatalf("read of a fenced log: %v, want ErrFenced", err)
	}
	if _, err := e.m.Append(1, []byte("b"), storage.AppendOptions{}); !errors.Is(err, ErrFenced) || !errors.Is(err, storage.ErrFenced) {
		t.Fatalf("append to a fenced log: %v, want ErrFenced wrapping storage.ErrFenced", err)
	}
	// A managed ledger opened over a fenced log starts fenced.
	m2, err := Open(e.store, testLog, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if _, _, err := m2.ReadEntries(Committed, Earliest, NoLimit, 1, 1, nil); !errors.Is(err, ErrFenced) {
		t.Fatalf("read through a new Managed: %v, want ErrFenced", err)
	}
}

// TestReadStoreClosed: R11, a read after the store underneath was closed
// is a fenced (and closed) error, not a storage error of another kind.
func TestReadStoreClosed(t *testing.T) {
	e := newEnv(t, Config{})
	e.append("a", 1)
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	_, _, err := e.m.ReadEntries(Committed, Earliest, NoLimit, 1, 1, nil)
	if !errors.Is(err, ErrFenced) || !errors.Is(err, ErrClosed) || !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("read over a closed store: %v", err)
	}
	if _, err := e.m.Append(1, []byte("b"), storage.AppendOptions{}); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("append over a closed store: %v", err)
	}
}

// TestReadConcurrent runs reads against a writer that rolls often and a
// trimmer that soft- and hard-trims behind it (R3, R6, R8, and pinning
// against a concurrent hard trim). Every read must return a dense run of
// entries whose payloads match their offsets.
func TestReadConcurrent(t *testing.T) {
	e := newEnv(t, Config{SegmentBytes: 5 * (frameOverhead + 8)})
	const total = 400
	stamp := storage.AppendOptions{Stamp: func(p []byte, base Offset) int64 {
		binary.BigEndian.PutUint64(p, uint64(base))
		return 0
	}}
	var wg sync.WaitGroup
	writerDone := make(chan struct{})
	wg.Add(1)
	go func() { // writer
		defer wg.Done()
		defer close(writerDone)
		for i := 0; i < total; i++ {
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
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(seed uint64) { // reader
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			for {
				select {
				case <-writerDone:
					return
				default:
				}
				_, es, err := e.m.ReadEntries(Committed, Earliest, NoLimit, 1+rng.IntN(30), rng.IntN(300), nil)
				if err != nil {
					t.Errorf("read: %v", err)
					return
				}
				if err := checkDense(es); err != nil {
					t.Error(err)
					return
				}
			}
		}(uint64(r))
	}
	wg.Wait()
	t.Logf("reads started again after a concurrent trim: %d", e.m.readRetries.Load())
	es := e.read(Earliest, 1000, 1<<20, NoLimit)
	if err := checkDense(es); err != nil {
		t.Fatal(err)
	}
	if last := es[len(es)-1]; last.End() != total {
		t.Fatalf("last entry ends at %d, want %d", last.End(), total)
	}
}

// checkDense: offsets follow one another, positions increase, and each
// payload carries its own offset (written by the Stamp hook).
func checkDense(es []Entry) error {
	for i, en := range es {
		if got := Offset(binary.BigEndian.Uint64(en.Payload)); got != en.Offset {
			return fmt.Errorf("entry at %v carries payload of %v", en.Offset, got)
		}
		if i == 0 {
			continue
		}
		prev := es[i-1]
		if en.Offset != prev.End() {
			return fmt.Errorf("gap: %v after entry ending at %v", en.Offset, prev.End())
		}
		if en.Ledger < prev.Ledger || (en.Ledger == prev.Ledger && en.Entry <= prev.Entry) {
			return fmt.Errorf("positions out of order: %v:%v then %v:%v", prev.Ledger, prev.Entry, en.Ledger, en.Entry)
		}
	}
	return nil
}

// TestReadFromEveryOffset: R2 by offset over many entries of varied sizes
// across ledgers: a read from any offset an entry holds returns that
// entry first; from the end, nothing.
func TestReadFromEveryOffset(t *testing.T) {
	e := newEnv(t, Config{})
	var hdrs []storage.EntryHeader
	for i := 0; i < 60; i++ {
		if i%17 == 16 {
			e.roll()
		}
		hdrs = append(hdrs, e.append(fmt.Sprintf("e%d", i), 1+i%5))
	}
	for _, h := range hdrs {
		for off := h.Offset; off < h.End(); off++ {
			es := e.read(off, 1, 0, NoLimit)
			if len(es) != 1 || es[0].Offset != h.Offset || es[0].Ledger != h.Ledger || es[0].Entry != h.Entry {
				t.Fatalf("read at %v: %s, want the entry at %v", off, payloads(es), h.Offset)
			}
		}
	}
	end := hdrs[len(hdrs)-1].End()
	if es := e.read(end, 1, 0, NoLimit); len(es) != 0 {
		t.Fatalf("read at the end %v: %s", end, payloads(es))
	}
}
