package storage

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// fillLedgers writes entries of 1..9 records into three ledgers and
// returns their headers in offset order.
func fillLedgers(t *testing.T, s *Store, id LogID, perLedger int) []EntryHeader {
	t.Helper()
	if err := s.CreateLog(id); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var hs []EntryHeader
	for l := range 3 {
		if l > 0 {
			if _, err := s.Roll(id); err != nil {
				t.Fatal(err)
			}
		}
		for range perLedger {
			hs = append(hs, mustAppend(t, s, id, 1+rng.IntN(9), []byte("x"), 1))
		}
	}
	return hs
}

// TestEntryAtSearch: with no position key, EntryAt finds every entry of
// every ledger by a binary search over the ledger's offsets, in O(log n)
// index seeks, and reports positions that name no entry as ErrNotFound and
// soft-trimmed ones as ErrTrimmed.
func TestEntryAtSearch(t *testing.T) {
	dir := t.TempDir()
	var probes probeCount
	s := newStore(t, dir, probes.hook(Options{TailCacheBytes: -1})) // every lookup goes to the index
	const id, per = LogID(3), 200
	hs := fillLedgers(t, s, id, per)
	defer func() { s.Close() }()
	span := int64(hs[len(hs)-1].End())
	for _, want := range hs {
		before := probes.Load()
		got, err := s.EntryAt(id, want.Ledger, want.Entry)
		if err != nil || got != want {
			t.Fatalf("EntryAt(%v:%v) = %+v, %v; want %+v", want.Ledger, want.Entry, got, err, want)
		}
		if probes := probes.Load() - before; probes == 0 || probes > int64(bits.Len64(uint64(span)))+1 {
			t.Fatalf("EntryAt(%v:%v) took %d index probes over %d offsets: not a binary search", want.Ledger, want.Entry, probes, span)
		}
	}
	last := hs[len(hs)-1]
	for _, p := range [][2]uint64{
		{uint64(hs[0].Ledger), per},     // past a sealed ledger's last entry
		{uint64(last.Ledger), per},      // past the open ledger's last entry
		{uint64(last.Ledger) + 1, 0},    // no such ledger
		{uint64(hs[0].Ledger), 1 << 62}, // far past
		{uint64(hs[0].Ledger), per - 1}, // the first ledger's last entry exists
	} {
		_, err := s.EntryAt(id, LedgerID(p[0]), EntryID(p[1]))
		exists := LedgerID(p[0]) == hs[0].Ledger && EntryID(p[1]) < per
		if exists != (err == nil) || (!exists && !errors.Is(err, ErrNotFound)) {
			t.Fatalf("EntryAt(%d:%d): %v", p[0], p[1], err)
		}
	}
	if err := s.SoftTrim(id, hs[5].End()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EntryAt(id, hs[5].Ledger, hs[5].Entry); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("EntryAt of a soft-trimmed entry: %v", err)
	}
	if _, err := s.EntryAt(id, hs[6].Ledger, hs[6].Entry); err != nil {
		t.Fatalf("EntryAt of the first visible entry: %v", err)
	}
}

// TestLegacyPositionKeys: a store written by an earlier version holds a
// position key (p|) per entry. Such a store opens, verifies clean, reads
// and looks entries up as any other, a hard trim removes the keys of the
// ledgers it removes, and DeleteLog removes the rest.
func TestLegacyPositionKeys(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	const id, per = LogID(4), 20
	hs := fillLedgers(t, s, id, per)
	b := s.db.NewBatch()
	for _, h := range hs { // what the earlier version wrote beside each index entry
		_ = b.Set(posKey(id, h.Ledger, h.Entry), appendU64(nil, uint64(h.Offset)), nil)
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := ro.Verify(nil); err != nil {
		t.Fatalf("verify a store with position keys: %v %v", err, rep.Problems)
	}
	ro.Close()
	s = newStore(t, dir, Options{})
	defer func() { s.Close() }()
	if es, err := s.ReadEntries(id, 0, 0, 0); err != nil || len(es) != len(hs) {
		t.Fatalf("read %d entries, %v; want %d", len(es), err, len(hs))
	}
	for _, want := range hs {
		if got, err := s.EntryAt(id, want.Ledger, want.Entry); err != nil || got != want {
			t.Fatalf("EntryAt(%v:%v) = %+v, %v", want.Ledger, want.Entry, got, err)
		}
	}
	countPos := func() int {
		lo, hi := logPrefixRange(prefixPos, id)
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		n := 0
		for it.First(); it.Valid(); it.Next() {
			n++
		}
		return n
	}
	if err := s.HardTrim(id, hs[per].Offset); err != nil {
		t.Fatal(err)
	}
	if n := countPos(); n != 2*per {
		t.Fatalf("%d position keys after a hard trim of one ledger, want %d", n, 2*per)
	}
	if err := s.DeleteLog(id); err != nil {
		t.Fatal(err)
	}
	if n := countPos(); n != 0 {
		t.Fatalf("%d position keys after DeleteLog", n)
	}
}
