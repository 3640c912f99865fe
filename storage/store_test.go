package storage

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/cockroachdb/pebble/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

func newStore(t testing.TB, dir string, opts Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

// probeCount counts a store's index probes (Options.OnIndexProbes).
type probeCount struct{ atomic.Int64 }

// hook returns opts counting into c.
func (c *probeCount) hook(opts Options) Options {
	opts.OnIndexProbes = func(n int) { c.Add(int64(n)) }
	return opts
}

func payloadFor(off Offset, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(int(off)*7 + i)
	}
	return p
}

func mustAppend(t testing.TB, s *Store, id LogID, records int, payload []byte, maxTime int64) EntryHeader {
	t.Helper()
	h, err := s.Append(id, records, payload, AppendOptions{MaxTime: maxTime})
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return h
}

func segFiles(t testing.TB, dir string) []string {
	t.Helper()
	names, err := OSFS().ReadDir(filepath.Join(dir, "segments"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestRoundTripAndDescriptors(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	defer s.Close()
	const id = LogID(7)
	if err := s.CreateLog(id); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateLog(id); !errors.Is(err, ErrLogExists) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := s.FirstOffset(id); !errors.Is(err, ErrEmpty) {
		t.Fatalf("first of empty: %v", err)
	}
	if got, err := s.ReadEntries(id, 0, 10, 1<<20); err != nil || len(got) != 0 {
		t.Fatalf("read at end of empty log: %v %v", got, err)
	}
	var hdrs []EntryHeader
	cum := int64(0)
	for i := 0; i < 10; i++ {
		off := Offset(i * 3)
		p := payloadFor(off, 100+i)
		cum += int64(len(p))
		h := mustAppend(t, s, id, 3, p, int64(1000+i*10))
		if h.Offset != off || h.Records != 3 || h.Entry != EntryID(i) || h.Cum != cum {
			t.Fatalf("entry %d header %+v", i, h)
		}
		hdrs = append(hdrs, h)
	}
	first, err := s.FirstOffset(id)
	if err != nil || first != hdrs[0] {
		t.Fatalf("first %+v %v", first, err)
	}
	last, err := s.LastOffset(id)
	if err != nil || last != hdrs[9] {
		t.Fatalf("last %+v %v", last, err)
	}
	for off := Offset(0); off < 30; off++ {
		h, err := s.Floor(id, off)
		if err != nil || h != hdrs[off/3] {
			t.Fatalf("floor %v: %+v %v", off, h, err)
		}
	}
	if _, err := s.Floor(id, 30); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("floor at end: %v", err)
	}
	got, err := s.ReadEntries(id, 4, 0, 0)
	if err != nil || len(got) != 9 {
		t.Fatalf("read all from 4: %d %v", len(got), err)
	}
	for i, e := range got {
		if e.EntryHeader != hdrs[i+1] || !bytes.Equal(e.Payload, payloadFor(e.Offset, 100+i+1)) {
			t.Fatalf("entry %d mismatch", i)
		}
	}
	// Budgets: records, bytes, and the first entry always whole.
	if got, _ := s.ReadEntries(id, 0, 7, 0); len(got) != 2 {
		t.Fatalf("maxRecords 7 gave %d entries", len(got))
	}
	if got, _ := s.ReadEntries(id, 0, 0, 1); len(got) != 1 {
		t.Fatalf("maxBytes 1 gave %d entries", len(got))
	}
	if _, err := s.ReadEntries(id, 31, 1, 1); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("read past end: %v", err)
	}
	ir, err := s.IndexRange(id, 5, 3)
	if err != nil || len(ir) != 3 || ir[0] != hdrs[1] {
		t.Fatalf("index range %v %v", ir, err)
	}
	ents, err := s.ReadIndexed(id, ir)
	if err != nil || len(ents) != 3 || ents[2].EntryHeader != hdrs[3] {
		t.Fatalf("read indexed %v", err)
	}
	if h, err := s.EntryAt(id, hdrs[4].Ledger, 4); err != nil || h != hdrs[4] {
		t.Fatalf("entry at %+v %v", h, err)
	}
	if _, err := s.EntryAt(id, hdrs[4].Ledger, 10); !errors.Is(err, ErrNotFound) {
		t.Fatalf("entry at missing: %v", err)
	}
	if h, err := s.SeekTime(id, 1015); err != nil || h != hdrs[2] {
		t.Fatalf("seek time %+v %v", h, err)
	}
	if _, err := s.SeekTime(id, 5000); !errors.Is(err, ErrNotFound) {
		t.Fatalf("seek time past: %v", err)
	}
	info, err := s.Info(id)
	if err != nil || info.End != 30 || info.Start != 0 || len(info.Ledgers) != 1 || info.Ledgers[0].Entries != 10 {
		t.Fatalf("info %+v %v", info, err)
	}
	if ids := s.Logs(); len(ids) != 1 || ids[0] != id {
		t.Fatalf("logs %v", ids)
	}
}

func TestStampAndInvalid(t *testing.T) {
	s := newStore(t, t.TempDir(), Options{})
	defer s.Close()
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(1, 0, []byte("x"), AppendOptions{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("zero records: %v", err)
	}
	if _, err := s.Append(2, 1, []byte("x"), AppendOptions{}); !errors.Is(err, ErrNoLog) {
		t.Fatalf("no log: %v", err)
	}
	mustAppend(t, s, 1, 5, []byte("aaaaaaaa"), 1)
	stamp := func(p []byte, base Offset) int64 {
		copy(p, fmt.Sprintf("%08d", base))
		return 42
	}
	h, err := s.Append(1, 2, []byte("........"), AppendOptions{Stamp: stamp})
	if err != nil || h.MaxTime != 42 || h.Offset != 5 {
		t.Fatalf("stamped %+v %v", h, err)
	}
	got, err := s.ReadEntries(1, 6, 1, 0)
	if err != nil || string(got[0].Payload) != "00000005" {
		t.Fatalf("stamped payload %v %v", got, err)
	}
}

func TestRollCrossesLedgers(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	defer s.Close()
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, 1, 1, []byte("a"), 0)
	l2, err := s.Roll(1)
	if err != nil {
		t.Fatal(err)
	}
	l3, err := s.Roll(1) // empty sealed ledger l2
	if err != nil || l3 <= l2 {
		t.Fatalf("roll %v %v", l3, err)
	}
	h := mustAppend(t, s, 1, 1, []byte("b"), 0)
	if h.Ledger != l3 || h.Entry != 0 || h.Offset != 1 || h.Pos != 0 {
		t.Fatalf("after roll %+v", h)
	}
	got, err := s.ReadEntries(1, 0, 10, 0)
	if err != nil || len(got) != 2 || string(got[1].Payload) != "b" {
		t.Fatalf("cross-ledger read %v %v", got, err)
	}
	info, _ := s.Info(1)
	if len(info.Ledgers) != 3 || !info.Ledgers[1].Sealed || info.Ledgers[1].Entries != 0 ||
		info.Ledgers[1].FirstOffset != 1 || info.Ledgers[2].Sealed || info.Ledgers[0].Entries != 1 {
		t.Fatalf("ledgers %+v", info.Ledgers)
	}
	if n := len(segFiles(t, dir)); n != 3 {
		t.Fatalf("%d segment files", n)
	}
}

func TestSoftTrimHides(t *testing.T) {
	s := newStore(t, t.TempDir(), Options{})
	defer s.Close()
	_ = s.CreateLog(1)
	for i := 0; i < 5; i++ {
		mustAppend(t, s, 1, 10, []byte{byte(i)}, int64(i))
	}
	if err := s.SoftTrim(1, 25); err != nil {
		t.Fatal(err)
	}
	if err := s.SoftTrim(1, 10); err != nil { // never backwards
		t.Fatal(err)
	}
	if err := s.SoftTrim(1, 51); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("trim past end: %v", err)
	}
	f, err := s.FirstOffset(1)
	if err != nil || f.Offset != 20 { // straddles 25: visible
		t.Fatalf("first after trim %+v %v", f, err)
	}
	if _, err := s.ReadEntries(1, 19, 1, 0); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("read trimmed: %v", err)
	}
	if _, err := s.Floor(1, 5); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("floor trimmed: %v", err)
	}
	if h, err := s.SeekTime(1, 0); err != nil || h.Offset != 20 {
		t.Fatalf("seek time into trimmed %+v %v", h, err)
	}
	if _, err := s.EntryAt(1, f.Ledger, 0); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("entry at trimmed: %v", err)
	}
	info, _ := s.Info(1)
	if info.Start != 25 || info.End != 50 {
		t.Fatalf("info %+v", info)
	}
	if err := s.SoftTrim(1, 50); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LastOffset(1); !errors.Is(err, ErrEmpty) {
		t.Fatalf("last of fully trimmed: %v", err)
	}
}

func TestHardTrimRemovesFiles(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	defer s.Close()
	_ = s.CreateLog(1)
	for i := 0; i < 4; i++ {
		mustAppend(t, s, 1, 10, []byte{byte(i)}, 0)
		if _, err := s.Roll(1); err != nil {
			t.Fatal(err)
		}
	}
	// Ledgers: [0,10) [10,20) [20,30) [30,40) open@40.
	if err := s.HardTrim(1, 25); err != nil {
		t.Fatal(err)
	}
	info, _ := s.Info(1)
	if len(info.Ledgers) != 3 || info.Start != 20 || info.Ledgers[0].FirstOffset != 20 {
		t.Fatalf("after hard trim %+v", info)
	}
	// Three ledger files, and the newest trimmed one kept as the spare (I8).
	if got := segFiles(t, dir); len(got) != 4 || got[3] != spareFileName(1) {
		t.Fatalf("files left: %q", got)
	}
	if _, err := s.ReadEntries(1, 5, 1, 0); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("read removed: %v", err)
	}
	if got, err := s.ReadEntries(1, 20, 0, 0); err != nil || len(got) != 2 {
		t.Fatalf("read remaining %v %v", got, err)
	}
	// The open ledger is never removed.
	if err := s.HardTrim(1, 1000); err != nil {
		t.Fatal(err)
	}
	info, _ = s.Info(1)
	if len(info.Ledgers) != 1 || info.Start != 40 || info.End != 40 {
		t.Fatalf("after full trim %+v", info)
	}
	mustAppend(t, s, 1, 1, []byte("z"), 0)
}

// HardTrim drops the time-index keys of removed ledgers but the last one,
// which it moves to the highest raise of the running max below the trim
// point when that raise had no key of its own (timeKeyEvery), and
// SeekTime stays right for timestamps inside and past the removed part.
func TestHardTrimTimeIndex(t *testing.T) {
	s := newStore(t, t.TempDir(), Options{})
	defer s.Close()
	_ = s.CreateLog(1)
	for i := 0; i < 4; i++ { // entry i at offset 10i, max time 100i
		mustAppend(t, s, 1, 10, []byte{byte(i)}, int64(100*i))
		if _, err := s.Roll(1); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.HardTrim(1, 25); err != nil { // removes [0,10) and [10,20)
		t.Fatal(err)
	}
	lo, hi := logPrefixRange(prefixTime, 1)
	it, _ := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	var keys int
	for ok := it.First(); ok; ok = it.Next() {
		keys++
	}
	_ = it.Close()
	// Only offset 0 had a key (the others are within timeKeyEvery of it);
	// the trim replaced it with one at 10, the highest raise it removes.
	if keys != 1 {
		t.Fatalf("%d time keys left, want 1", keys)
	}
	for ts, want := range map[int64]Offset{0: 20, 100: 20, 150: 20, 200: 20, 250: 30, 300: 30} {
		if h, err := s.SeekTime(1, ts); err != nil || h.Offset != want {
			t.Fatalf("SeekTime(%d) = %+v %v, want offset %d", ts, h, err, want)
		}
	}
}

func TestPinDefersRemoval(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	defer s.Close()
	_ = s.CreateLog(1)
	h := mustAppend(t, s, 1, 1, []byte("a"), 0)
	if _, err := s.Roll(1); err != nil {
		t.Fatal(err)
	}
	release, err := s.Pin(1, h.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.HardTrim(1, 1); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "segments", SegmentFileName(1, h.Ledger))
	if _, err := os.Stat(name); err != nil {
		t.Fatalf("pinned file removed: %v", err)
	}
	release()
	release() // idempotent
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Fatalf("file survives last unpin: %v", err)
	}
}

func TestDeleteLog(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	_ = s.CreateLog(1)
	_ = s.CreateLog(2)
	mustAppend(t, s, 1, 1, []byte("a"), 0)
	_, _ = s.Roll(1)
	mustAppend(t, s, 1, 1, []byte("b"), 0)
	mustAppend(t, s, 2, 1, []byte("c"), 0)
	if err := s.DeleteLog(1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Info(1); !errors.Is(err, ErrNoLog) {
		t.Fatalf("info deleted: %v", err)
	}
	if _, err := s.Append(1, 1, []byte("x"), AppendOptions{}); !errors.Is(err, ErrNoLog) {
		t.Fatalf("append deleted: %v", err)
	}
	if n := len(segFiles(t, dir)); n != 1 {
		t.Fatalf("%d files after delete", n)
	}
	if err := s.CreateLog(1); err != nil { // a new incarnation starts empty
		t.Fatal(err)
	}
	if info, _ := s.Info(1); info.End != 0 || info.Ledgers[0].ID <= 2 {
		t.Fatalf("recreated %+v", info)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = newStore(t, dir, Options{})
	defer s.Close()
	if got := s.Logs(); len(got) != 2 {
		t.Fatalf("logs after reopen %v", got)
	}
	if got, err := s.ReadEntries(2, 0, 1, 0); err != nil || string(got[0].Payload) != "c" {
		t.Fatalf("other log %v %v", got, err)
	}
}

func TestFenceDurable(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	_ = s.CreateLog(1)
	mustAppend(t, s, 1, 1, []byte("a"), 0)
	if err := s.Fence(1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(1, 1, []byte("b"), AppendOptions{}); !errors.Is(err, ErrFenced) {
		t.Fatalf("append fenced: %v", err)
	}
	if got, err := s.ReadEntries(1, 0, 1, 0); err != nil || len(got) != 1 {
		t.Fatalf("read fenced %v", err)
	}
	_ = s.Close()
	s = newStore(t, dir, Options{})
	defer s.Close()
	if info, _ := s.Info(1); info.State != Fenced {
		t.Fatalf("state after reopen %v", info.State)
	}
	if err := s.Activate(1); err != nil {
		t.Fatal(err)
	}
	if h := mustAppend(t, s, 1, 1, []byte("b"), 0); h.Offset != 1 {
		t.Fatalf("after activate %+v", h)
	}
	if _, err := s.Append(1, 1, nil, AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestReopenAfterCleanClose(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	_ = s.CreateLog(3)
	var want []EntryHeader
	for i := 0; i < 20; i++ {
		want = append(want, mustAppend(t, s, 3, 2, payloadFor(Offset(i*2), 50), int64(i)))
		if i == 9 {
			if _, err := s.Roll(3); err != nil {
				t.Fatal(err)
			}
		}
	}
	_ = s.SoftTrim(3, 3)
	before, _ := s.Info(3)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(3, 1, nil, AppendOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	s = newStore(t, dir, Options{})
	defer s.Close()
	after, _ := s.Info(3)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("info changed:\n%+v\n%+v", before, after)
	}
	got, err := s.ReadEntries(3, 3, 0, 0)
	if err != nil || len(got) != 19 {
		t.Fatalf("read after reopen %d %v", len(got), err)
	}
	for i, e := range got {
		if e.EntryHeader != want[i+1] {
			t.Fatalf("entry %d: %+v want %+v", i, e.EntryHeader, want[i+1])
		}
	}
	h := mustAppend(t, s, 3, 1, nil, 100)
	if h.Offset != 40 || h.Cum != want[19].Cum || h.Entry != 10 {
		t.Fatalf("append after reopen %+v", h)
	}
	if h2, err := s.SeekTime(3, 100); err != nil || h2 != h {
		t.Fatalf("time index after reopen %+v %v", h2, err)
	}
}

func TestConcurrentAppendsDense(t *testing.T) {
	s := newStore(t, t.TempDir(), Options{})
	defer s.Close()
	for id := LogID(1); id <= 3; id++ {
		_ = s.CreateLog(id)
	}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				id := LogID(1 + (w+i)%3)
				if _, err := s.Append(id, 1+i%3, payloadFor(Offset(i), 64), AppendOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for id := LogID(1); id <= 3; id++ {
		info, _ := s.Info(id)
		got, err := s.ReadEntries(id, 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		next := Offset(0)
		for _, e := range got {
			if e.Offset != next { // D3: dense
				t.Fatalf("%v: gap at %v", id, next)
			}
			next = e.End()
		}
		if next != info.End {
			t.Fatalf("%v: end %v, entries end at %v", id, info.End, next)
		}
	}
}

func TestMeta(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	_ = s.CreateLog(1)
	err := s.ApplyMeta(MetaOp{Key: []byte("topic/a"), Value: []byte("1")},
		MetaOp{Key: []byte("topic/b"), Value: []byte("2")}, MetaOp{Key: []byte("topiz"), Value: []byte("3")})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.ApplyMeta(MetaOp{Key: []byte("topic/a"), Delete: true})
	if _, err := s.GetMeta([]byte("topic/a")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted: %v", err)
	}
	_ = s.Close()
	s = newStore(t, dir, Options{})
	defer s.Close()
	if v, err := s.GetMeta([]byte("topiz")); err != nil || string(v) != "3" {
		t.Fatalf("get %q %v", v, err)
	}
	var keys []string
	_ = s.ScanMeta([]byte("topic/"), func(k, v []byte) error { keys = append(keys, string(k)+"="+string(v)); return nil })
	if fmt.Sprint(keys) != "[topic/b=2]" {
		t.Fatalf("scan %v", keys)
	}
	if got := s.Logs(); len(got) != 1 {
		t.Fatalf("meta leaked into logs: %v", got)
	}
}
