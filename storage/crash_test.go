package storage

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/kgateway/kgateway/storage/vfstest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// crashModel is what the test knows about one log before a crash.
type crashModel struct {
	written map[Offset][]byte // every entry Write accepted, by offset
	acked   map[Offset]bool   // acknowledged (Append returned / Wait nil)
	start   Offset            // Start after the last completed trim
	// times is every written entry's max timestamp, when the test
	// checks the time index after the crash (nil: it does not).
	times map[Offset]int64
}

// runCrashPoint drives a random workload on a fresh machine, crashes it
// and checks D2 after reopening: every acknowledged entry at or above
// Start is present at its offset with its bytes, every visible entry is
// whole, offsets are dense (D3), and a completed trim survived. The crash
// comes either at a random step of a later group commit (the committer
// stopped there, the clones in a random order) or at the end of the
// workload with the clones spread around a Roll (pebble first).
func runCrashPoint(t *testing.T, seed uint64, cov *vfstest.Coverage) {
	runCrashPointWith(t, seed, cov, 0)
}

// runCrashPointWith is runCrashPoint with Options.JournalBytes set to
// journal (I15); it returns how many frames Open wrote back from the
// journal.
func runCrashPointWith(t *testing.T, seed uint64, cov *vfstest.Coverage, journal int) (replayed int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	m := vfstest.NewMachine(0)
	const dir = "/data"
	s, err := Open(dir, Options{FS: m.Files, PebbleFS: m.Index, JournalBytes: journal})
	if err != nil {
		t.Fatalf("seed %d: open: %v", seed, err)
	}
	if journal != 0 {
		waitJournalFilled(t, s)
	}
	logs := []LogID{1, 2}
	models := map[LogID]*crashModel{}
	for _, id := range logs {
		if err := s.CreateLog(id); err != nil {
			t.Fatal(err)
		}
		models[id] = &crashModel{written: map[Offset][]byte{}, acked: map[Offset]bool{}, times: map[Offset]int64{}}
	}
	var mu sync.Mutex // guards models and pendings against a crash hook
	var pendings []*Pending
	write := func(id LogID, step int) {
		p := make([]byte, 1+rng.IntN(300))
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		pd, err := s.Write(id, 1+rng.IntN(4), p, AppendOptions{MaxTime: int64(step)})
		if err != nil {
			t.Fatalf("seed %d: write: %v", seed, err)
		}
		mu.Lock()
		models[id].written[pd.Header().Offset] = p
		models[id].times[pd.Header().Offset] = int64(step)
		pendings = append(pendings, pd)
		mu.Unlock()
	}
	if journal != 0 && rng.IntN(2) == 0 {
		s = earlierLife(t, seed, rng, s, m, journal, write, &pendings, models)
	}
	steps := 5 + rng.IntN(40)
	for step := 0; step < steps; step++ {
		id := logs[rng.IntN(len(logs))]
		md := models[id]
		switch op := rng.IntN(20); {
		case op < 8: // write, maybe wait later
			write(id, step)
		case op < 14 && len(pendings) > 0: // wait for one
			i := rng.IntN(len(pendings))
			pd := pendings[i]
			pendings = append(pendings[:i], pendings[i+1:]...)
			if err := pd.Wait(); err != nil {
				t.Fatalf("seed %d: wait: %v", seed, err)
			}
			models[pd.log.id].acked[pd.Header().Offset] = true
		case op < 16:
			if _, err := s.Roll(id); err != nil {
				t.Fatalf("seed %d: roll: %v", seed, err)
			}
		case op < 18:
			info, _ := s.Info(id)
			off := md.start + Offset(rng.IntN(int(info.End-md.start)+1))
			if err := s.SoftTrim(id, off); err != nil {
				t.Fatalf("seed %d: soft trim: %v", seed, err)
			}
			md.start = max(md.start, off)
		default:
			info, _ := s.Info(id)
			if err := s.HardTrim(id, Offset(rng.IntN(int(info.End)+1))); err != nil {
				t.Fatalf("seed %d: hard trim: %v", seed, err)
			}
			info, _ = s.Info(id)
			md.start = info.Start
		}
	}
	// ackDone marks every pending whose commit published as acknowledged
	// and says whether any is still in flight.
	ackDone := func() (inFlight bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, pd := range pendings {
			select {
			case <-pd.done:
				models[pd.log.id].acked[pd.Header().Offset] = true
			default:
				inFlight = true
			}
		}
		return inFlight
	}
	var img vfstest.Image
	if rng.IntN(2) == 0 {
		// Stop a later group commit at a random step; only this goroutine's
		// writes and waits run meanwhile, so either clone order is valid.
		// The crash draws from its own generator: it runs on the committer.
		keep := vfstest.RandomKeep(rand.New(rand.NewPCG(seed, 8)))
		point, order := vfstest.Points[rng.IntN(len(vfstest.Points))], vfstest.Orders[rng.IntN(2)]
		var crashed atomic.Bool
		m.At(point, 1+rng.IntN(3), func() {
			checkIndexDurable(t, s, m.Files) // I2
			if ackDone() {
				cov.InFlight++
			}
			img = m.Crash(order, keep)
			crashed.Store(true)
		})
		for i := 0; !crashed.Load() && i < 40; i++ {
			write(logs[rng.IntN(len(logs))], steps+i)
			if i >= 20 || rng.IntN(3) == 0 { // at the latest, one group per write
				for _, pd := range pendings {
					_ = pd.Wait()
				}
			}
		}
		for _, pd := range pendings {
			_ = pd.Wait()
		}
		m.Disarm()
		if !crashed.Load() {
			t.Fatalf("seed %d: no commit reached %v", seed, point)
		}
	} else {
		if ackDone() {
			cov.InFlight++
		}
		rolls := rng.IntN(2) == 0
		img = m.CrashSpread(vfstest.RandomKeep(rng), func() {
			if rolls {
				if _, err := s.Roll(logs[rng.IntN(len(logs))]); err != nil {
					t.Errorf("seed %d: roll between the clones: %v", seed, err)
				}
				cov.RollsBetween++
			}
		})
	}
	_ = s.Close()
	core, logs2 := observer.New(zapcore.InfoLevel)
	s2, err := Open(dir, Options{FS: img.Files, PebbleFS: img.Index, Logger: zap.New(core), JournalBytes: journal})
	if err != nil {
		t.Fatalf("seed %d: reopen: %v\n%v", seed, err, img.Files)
	}
	defer s2.Close()
	cov.Crashes++
	cov.TornTails += logs2.FilterMessage("storage-torn-tail-truncated").Len()
	for _, e := range logs2.FilterMessage("storage-journal-replayed").All() {
		replayed += int(e.ContextMap()["frames"].(int64))
	}
	for _, id := range logs {
		cov.Acked += len(models[id].acked)
		cov.Unacked += checkRecovered(t, int64(seed), s2, id, models[id])
	}
	return replayed
}

// earlierLife gives a journaled crash run a life before the one that
// crashes: entries written and acknowledged, a clean Close, and an Open
// with the journal again, so that the journal files hold an earlier
// life's passes (kept, retired) when the crash comes.
func earlierLife(t *testing.T, seed uint64, rng *rand.Rand, s *Store, m *vfstest.Machine, journal int,
	write func(LogID, int), pendings *[]*Pending, models map[LogID]*crashModel) *Store {
	t.Helper()
	for i := range 5 + rng.IntN(60) {
		write(LogID(1+rng.IntN(2)), i)
	}
	for _, pd := range *pendings {
		if err := pd.Wait(); err != nil {
			t.Fatalf("seed %d: wait: %v", seed, err)
		}
		models[pd.log.id].acked[pd.Header().Offset] = true
	}
	*pendings = nil
	if err := s.Close(); err != nil {
		t.Fatalf("seed %d: close: %v", seed, err)
	}
	s, err := Open("/data", Options{FS: m.Files, PebbleFS: m.Index, JournalBytes: journal})
	if err != nil {
		t.Fatalf("seed %d: reopen: %v", seed, err)
	}
	waitJournalFilled(t, s)
	return s
}

func checkRecovered(t *testing.T, seed int64, s *Store, id LogID, m *crashModel) (unackedSeen int) {
	info, err := s.Info(id)
	if err != nil {
		t.Fatalf("seed %d: %v: info: %v", seed, id, err)
	}
	if info.Start < m.start {
		t.Fatalf("seed %d: %v: start %v went back below %v", seed, id, info.Start, m.start)
	}
	seen := map[Offset]bool{}
	if info.Start < info.End {
		first, err := s.FirstOffset(id)
		if err != nil {
			t.Fatalf("seed %d: %v: first: %v", seed, id, err)
		}
		got, err := s.ReadEntries(id, first.Offset, 0, 0)
		if err != nil {
			t.Fatalf("seed %d: %v: read: %v", seed, id, err)
		}
		next := first.Offset
		for _, e := range got {
			if e.Offset != next {
				t.Fatalf("seed %d: %v: gap: entry at %v, want %v", seed, id, e.Offset, next)
			}
			if !bytes.Equal(e.Payload, m.written[e.Offset]) {
				t.Fatalf("seed %d: %v: entry %v has wrong bytes", seed, id, e.Offset)
			}
			seen[e.Offset] = true
			if !m.acked[e.Offset] {
				unackedSeen++
			}
			next = e.End()
		}
		if next != info.End {
			t.Fatalf("seed %d: %v: entries end at %v, End %v", seed, id, next, info.End)
		}
	}
	for off := range m.acked {
		if off >= info.Start && !seen[off] {
			_, err := s.Floor(id, off)
			t.Fatalf("seed %d: %v: acknowledged entry %v lost (start %v end %v): %v", seed, id, off, info.Start, info.End, err)
		}
	}
	if m.times != nil {
		// The time index (sparse) answers as the recovered entries say.
		tm, hi := crashTimeModel(m.times, info)
		tm.checkAs(t, fmt.Sprintf("seed %d: %v: ", seed, id), s, id, hi)
	}
	// The log takes appends again, densely.
	h, err := s.Append(id, 1, []byte("after"), AppendOptions{})
	if err != nil || h.Offset != info.End {
		t.Fatalf("seed %d: %v: append after recovery %+v %v (end %v)", seed, id, h, err, info.End)
	}
	return unackedSeen
}

// TestCrashPoints runs hundreds of randomized crashes (D2, D3, D5), from
// a seed taken from the clock (-crash.seed replays a run), and demands
// that they reach torn tails, unacknowledged survivors, commits in flight
// and rolls between the clones.
func TestCrashPoints(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 50
	}
	base := vfstest.Seed(t)
	var cov vfstest.Coverage
	for i := range uint64(n) {
		runCrashPoint(t, base+i, &cov)
		if t.Failed() {
			t.Fatalf("failed at seed %d (replay: -crash.seed=%d)", base+i, base)
		}
	}
	cov.Require(t, vfstest.Coverage{Crashes: n, TornTails: 1, Unacked: 1, InFlight: 1, RollsBetween: 1, Acked: n})
}

// TestCrashPointsJournaled is TestCrashPoints with every group commit of
// small entries over both logs journaled (I15): an acknowledged entry
// whose file was never synced is written back from the journal at Open.
func TestCrashPointsJournaled(t *testing.T) {
	// Small journal files: passes end, and files are written over, often.
	defer func(n int64) { journalFileBytes = n }(journalFileBytes)
	journalFileBytes = 2 << 10
	n := 150
	if testing.Short() {
		n = 40
	}
	base := vfstest.Seed(t)
	var cov vfstest.Coverage
	replayed := 0
	for i := range uint64(n) {
		replayed += runCrashPointWith(t, base+i, &cov, 1<<20)
		if t.Failed() {
			t.Fatalf("failed at seed %d (replay: -crash.seed=%d)", base+i, base)
		}
	}
	cov.Require(t, vfstest.Coverage{Crashes: n, Unacked: 1, InFlight: 1, Acked: n})
	if replayed == 0 {
		t.Fatalf("no crash left a journaled frame to write back (seed %d)", base)
	}
}

// TestSyncFailureFailsLog: a failed fsync is never retried and never
// acknowledged; the log fails until reopened.
func TestSyncFailureFailsLog(t *testing.T) {
	dir := t.TempDir()
	ffs := vfstest.NewFaultFS(OSFS())
	s := newStore(t, dir, Options{FS: ffs})
	_ = s.CreateLog(1)
	_ = s.CreateLog(2)
	mustAppend(t, s, 1, 1, []byte("a"), 0)
	info, _ := s.Info(1)
	name := SegmentFileName(1, info.Ledgers[0].ID)
	ffs.FailSync(name, errors.New("EIO"))
	if _, err := s.Append(1, 1, []byte("b"), AppendOptions{}); !errors.Is(err, ErrFailed) {
		t.Fatalf("append on failed sync: %v", err)
	}
	ffs.Clear()
	if _, err := s.Append(1, 1, []byte("c"), AppendOptions{}); !errors.Is(err, ErrFailed) {
		t.Fatalf("append after failure: %v", err)
	}
	if _, err := s.Roll(1); !errors.Is(err, ErrFailed) {
		t.Fatalf("roll after failure: %v", err)
	}
	mustAppend(t, s, 2, 1, []byte("other log"), 0)
	if info, _ := s.Info(1); info.End != 1 {
		t.Fatalf("end moved past a failed sync: %v", info.End)
	}
	if got, err := s.ReadEntries(1, 0, 10, 0); err != nil || len(got) != 1 {
		t.Fatalf("read after failure %v %v", got, err)
	}
	_ = s.Close()
	s = newStore(t, dir, Options{FS: ffs})
	defer s.Close()
	h := mustAppend(t, s, 1, 1, []byte("d"), 0)
	got, err := s.ReadEntries(1, 0, 0, 0)
	if err != nil || string(got[0].Payload) != "a" || got[len(got)-1].Offset != h.Offset {
		t.Fatalf("after reopen %v %v", got, err)
	}
}

func TestWriteFailureENOSPC(t *testing.T) {
	ffs := vfstest.NewFaultFS(vfstest.NewMemFS())
	s := newStore(t, "/d", Options{FS: ffs, PebbleFS: vfs.NewMem()})
	defer s.Close()
	_ = s.CreateLog(1)
	ffs.FailWrite("", errNoSpace)
	if _, err := s.Append(1, 1, []byte("a"), AppendOptions{}); !errors.Is(err, ErrFailed) || !errors.Is(err, errNoSpace) {
		t.Fatalf("append on ENOSPC: %v", err)
	}
	ffs.Clear()
	if _, err := s.Append(1, 1, []byte("a"), AppendOptions{}); !errors.Is(err, ErrFailed) {
		t.Fatalf("append after ENOSPC: %v", err)
	}
}

var errNoSpace = errors.New("no space left on device")

// TestReadFailureLaterLedger: a read that fails in a later ledger returns
// what it collected (ReadEntries) or that plus the error (ReadIndexed).
func TestReadFailureLaterLedger(t *testing.T) {
	ffs := vfstest.NewFaultFS(vfstest.NewMemFS())
	s := newStore(t, "/d", Options{FS: ffs, PebbleFS: vfs.NewMem()})
	defer s.Close()
	_ = s.CreateLog(1)
	mustAppend(t, s, 1, 1, []byte("a"), 0)
	mustAppend(t, s, 1, 1, []byte("b"), 0)
	led2, _ := s.Roll(1)
	mustAppend(t, s, 1, 1, []byte("c"), 0)
	ffs.FailReadAt(SegmentFileName(1, led2), errors.New("EIO"))
	got, err := s.ReadEntries(1, 0, 0, 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("partial read %d %v", len(got), err)
	}
	hdrs, _ := s.IndexRange(1, 0, 10)
	got, err = s.ReadIndexed(1, hdrs)
	if err == nil || len(got) != 2 {
		t.Fatalf("read indexed %d %v", len(got), err)
	}
	if _, err := s.ReadEntries(1, 2, 0, 0); err == nil {
		t.Fatal("read of only the failing ledger succeeded")
	}
}

// TestCorruptEntryDetected: a flipped byte fails the CRC check on read.
func TestCorruptEntryDetected(t *testing.T) {
	fs := vfstest.NewMemFS()
	s := newStore(t, "/d", Options{FS: fs, PebbleFS: vfs.NewMem()})
	defer s.Close()
	_ = s.CreateLog(1)
	h := mustAppend(t, s, 1, 1, []byte("hello world"), 0)
	f, _ := fs.OpenFile("/d/segments/"+SegmentFileName(1, h.Ledger), 2, 0)
	_, _ = f.WriteAt([]byte{'X'}, h.Pos+frameHeaderLen+3)
	if _, err := s.ReadEntries(1, 0, 1, 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt read: %v", err)
	}
}

// TestCrashPointsConcurrent crashes while appenders and a roller run, so
// crashes land inside group commits and rolls: half at a random step of a
// random group commit (the committer stopped, either clone order), half
// at an instant with a Roll between the clones. Acknowledged means: Append
// returned before the crash began. (Trims are left out: their
// record-then-remove order is only valid with the files cloned first,
// rolls only with pebble first; vfstest's crash.go.)
func TestCrashPointsConcurrent(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 10
	}
	base := vfstest.Seed(t)
	var cov vfstest.Coverage
	for i := range uint64(n) {
		runConcurrentCrash(t, base+i, &cov)
		if t.Failed() {
			t.Fatalf("failed at seed %d (replay: -crash.seed=%d)", base+i, base)
		}
	}
	cov.Require(t, vfstest.Coverage{Crashes: n, TornTails: n / 20, Unacked: 1, InFlight: n / 2, RollsBetween: 1, Acked: n})
}

func runConcurrentCrash(t *testing.T, seed uint64, cov *vfstest.Coverage) {
	rng := rand.New(rand.NewPCG(seed, 11))
	m := vfstest.NewMachine(0)
	const dir = "/data"
	s, err := Open(dir, Options{FS: m.Files, PebbleFS: m.Index, MaxGroupBytes: 1 + rng.IntN(2000)})
	if err != nil {
		t.Fatal(err)
	}
	logs := []LogID{1, 2}
	var mu sync.Mutex // guards models and crashed
	crashed := false
	models := map[LogID]*crashModel{}
	for _, id := range logs {
		_ = s.CreateLog(id)
		models[id] = &crashModel{written: map[Offset][]byte{}, acked: map[Offset]bool{}}
	}
	acks := make(chan struct{}, 1000)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := logs[w%2]
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := make([]byte, 1+(w*31+i*17)%200)
				var off Offset
				stamp := func(b []byte, base Offset) int64 {
					off = base
					copy(b, payloadFor(base, len(b)))
					mu.Lock()
					models[id].written[base] = append([]byte(nil), b...)
					mu.Unlock()
					return 0
				}
				if _, err := s.Append(id, 1+i%3, p, AppendOptions{Stamp: stamp}); err != nil {
					return // the store is closing
				}
				mu.Lock()
				if !crashed {
					models[id].acked[off] = true
				}
				mu.Unlock()
				select {
				case acks <- struct{}{}:
				default:
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-acks:
			}
			if i%5 == 0 {
				if _, err := s.Roll(logs[i%2]); err != nil {
					return
				}
			}
		}
	}()
	// Crash after a random number of acknowledgements (a condition, not a
	// sleep).
	want := 5 + rng.IntN(60)
	for got := 0; got < want; {
		mu.Lock()
		got = len(models[1].acked) + len(models[2].acked)
		mu.Unlock()
		if got < want {
			runtime.Gosched()
		}
	}
	// inFlight freezes the acknowledged set and says whether some written
	// entry was not acknowledged at the crash.
	inFlight := func() bool {
		mu.Lock()
		defer mu.Unlock()
		crashed = true
		return len(models[1].written)+len(models[2].written) > len(models[1].acked)+len(models[2].acked)
	}
	keep := vfstest.RandomKeep(rand.New(rand.NewPCG(seed, 12)))
	var img vfstest.Image
	if rng.IntN(2) == 0 {
		fired := make(chan struct{})
		point, order := vfstest.Points[rng.IntN(len(vfstest.Points))], vfstest.Orders[rng.IntN(2)]
		m.At(point, 1+rng.IntN(5), func() {
			checkIndexDurable(t, s, m.Files) // I2
			if inFlight() || point != vfstest.AfterPublish {
				cov.InFlight++
			}
			img = m.Crash(order, keep)
			close(fired)
		})
		<-fired
		m.Disarm()
	} else {
		if inFlight() {
			cov.InFlight++
		}
		roll := rng.IntN(2) == 0
		img = m.CrashSpread(keep, func() {
			if roll {
				if _, err := s.Roll(logs[rng.IntN(2)]); err != nil {
					t.Errorf("seed %d: roll between the clones: %v", seed, err)
				}
				cov.RollsBetween++
			}
		})
	}
	close(stop)
	_ = s.Close()
	wg.Wait()
	core, obs := observer.New(zapcore.InfoLevel)
	s2, err := Open(dir, Options{FS: img.Files, PebbleFS: img.Index, Logger: zap.New(core)})
	if err != nil {
		t.Fatalf("seed %d: reopen: %v", seed, err)
	}
	defer s2.Close()
	cov.Crashes++
	cov.TornTails += obs.FilterMessage("storage-torn-tail-truncated").Len()
	for _, id := range logs {
		cov.Acked += len(models[id].acked)
		cov.Unacked += checkRecovered(t, int64(seed), s2, id, models[id])
	}
}
