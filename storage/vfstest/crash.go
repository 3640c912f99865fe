package vfstest

// Machine: crash points and crash images for crash tests.
//
//	m := vfstest.NewMachine(1)                  // + the offsets store's pebble
//	st, _ := storage.Open("/data", storage.Options{FS: m.Files, PebbleFS: m.Index})
//	offs, _ := offsets.Open("/offsets", offsets.Options{PebbleFS: m.Others[0]})
//	m.At(vfstest.AfterSync, 3, func() { img = m.Crash(vfstest.FilesFirst, keep) })
//	... appends: the third group commit stops after its fdatasync ...
//	img = m.Crash(vfstest.PebbleFirst, vfstest.RandomKeep(rng)) // or at any instant
//	st2, _ := storage.Open("/data", storage.Options{FS: img.Files, PebbleFS: img.Index})
//
// A crash image has one clone per disk: the segment files' MemFS and each
// pebble instance's crashable vfs.MemFS. A real crash is one instant; the
// clones are taken one after the other, so an image is one the real
// system can produce only when nothing between the clones could make it
// inconsistent:
//
//   - At a Point the store's committer is stopped (Step runs on it) or a
//     file Sync is held (SyncHeld): no group commit makes anything durable
//     or indexes anything until the hook returns, so the clones may be
//     taken in either order (FilesFirst shows the index as far ahead of
//     the files as the real system can have it). Writes and Rolls may run
//     meanwhile (a Roll's new ledger has no indexed entry yet, so either
//     order leaves a state recovery knows: I1); trims must not.
//   - At any other instant only PebbleFirst is valid: the files are then
//     at least as new as the index, so the index never names bytes the
//     image lacks; index records made between the clones (a Roll's
//     ledger record) are lost as if the crash came before them. Trims,
//     whose records precede their file removals, must not run between.

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/kgateway/kgateway/storage/fsys"
)

// Point is where a crash test can stop the machine: a step of the store's
// group commit (fsys.Step), or a segment file's Sync held before it takes
// effect.
type Point uint8

const (
	AfterWrite   = Point(fsys.StepWritten)   // frames written, nothing synced
	AfterSync    = Point(fsys.StepSynced)    // files synced, index not committed
	AfterIndex   = Point(fsys.StepIndexed)   // index committed, ends not published
	AfterPublish = Point(fsys.StepPublished) // published, waiters woken
	SyncHeld     = Point(fsys.StepPublished + 1)
)

// Points lists every Point in the order a group commit passes them.
var Points = []Point{AfterWrite, SyncHeld, AfterSync, AfterIndex, AfterPublish}

func (p Point) String() string {
	if p == SyncHeld {
		return "sync-held"
	}
	return "after-" + fsys.Step(p).String()
}

// Order is the order in which a crash takes its clones.
type Order uint8

const (
	PebbleFirst Order = iota // every pebble, then the segment files
	FilesFirst               // the segment files, then every pebble
)

// Orders lists both orders (for a stopped Point, where both are valid).
var Orders = []Order{PebbleFirst, FilesFirst}

func (o Order) String() string {
	if o == FilesFirst {
		return "files-first"
	}
	return "pebble-first"
}

// Keep says how much unsynced data survives a crash: Files for the segment
// files, PebblePercent (0-100) for every pebble instance.
type Keep struct {
	Files         CrashConfig
	PebblePercent int
}

// SyncedOnly keeps exactly what was synced.
var SyncedOnly = Keep{}

// Everything keeps every write, synced or not: with SyncedOnly on the
// files it is the image where the index is furthest ahead of the files.
func Everything(rng *rand.Rand) Keep {
	return Keep{Files: CrashConfig{Rand: rng, KeepUnsynced: 100}, PebblePercent: 100}
}

// IndexAhead keeps every unsynced pebble write and no unsynced file
// write: any index entry naming an unsynced byte shows in it (I2).
func IndexAhead(rng *rand.Rand) Keep {
	return Keep{Files: CrashConfig{Rand: rng}, PebblePercent: 100}
}

// RandomKeep draws a random share of unsynced writes to keep, maybe
// reordered, maybe with each file's last surviving write torn.
func RandomKeep(rng *rand.Rand) Keep {
	return Keep{
		Files:         CrashConfig{Rand: rng, KeepUnsynced: rng.IntN(101), Reorder: rng.IntN(2) == 0, Tear: rng.IntN(2) == 0},
		PebblePercent: rng.IntN(101),
	}
}

// Machine is the disks of one simulated machine.
type Machine struct {
	Files  *MemFS       // segment files: storage.Options.FS
	Index  *vfs.MemFS   // the store's pebble: storage.Options.PebbleFS
	Others []*vfs.MemFS // more pebble instances that crash with it
	hookMu sync.Mutex   // held by an armed point's fn; every point waits for it
}

// NewMachine returns empty disks, with others extra pebble instances.
func NewMachine(others int) *Machine {
	m := &Machine{Files: NewMemFS(), Index: vfs.NewCrashableMem()}
	for range others {
		m.Others = append(m.Others, vfs.NewCrashableMem())
	}
	return m
}

// Image is what a crash left: one clone per disk, to reopen on.
type Image struct {
	Files  *MemFS
	Index  *vfs.MemFS
	Others []*vfs.MemFS
}

// Crash takes a crash image now, the clones in the given order (see the
// file comment for when each order is valid). keep.Files.Rand and, when
// PebblePercent > 0, a RNG are required for random choices; the pebble
// clones use keep.Files.Rand.
func (m *Machine) Crash(order Order, keep Keep) Image {
	if order == PebbleFirst {
		return m.CrashSpread(keep, nil)
	}
	img := Image{Files: m.Files.Crash(keep.Files)}
	img.Index, img.Others = m.clonePebbles(keep)
	return img
}

func (m *Machine) clonePebbles(keep Keep) (*vfs.MemFS, []*vfs.MemFS) {
	cfg := vfs.CrashCloneCfg{UnsyncedDataPercent: keep.PebblePercent, RNG: keep.Files.Rand}
	var others []*vfs.MemFS
	for _, o := range m.Others {
		others = append(others, o.CrashClone(cfg))
	}
	return m.Index.CrashClone(cfg), others
}

// CrashSpread takes every pebble clone, runs between (more appends, a
// Roll), then takes the segment files' clone: a crash image with activity
// between the clones, valid for appends and rolls (file comment). Entries
// acknowledged after the pebble clones must not count as acknowledged.
func (m *Machine) CrashSpread(keep Keep, between func()) Image {
	var img Image
	img.Index, img.Others = m.clonePebbles(keep)
	if between != nil {
		between()
	}
	img.Files = m.Files.Crash(keep.Files)
	return img
}

// At arms a one-shot crash point: the n-th time (from 1) the machine
// passes p, fn runs there, with the committer stopped (or the sync held)
// until it returns, and every other sync held at its start. fn typically
// records what was acknowledged and calls Crash. Arming again replaces
// the previous point; Disarm removes it.
func (m *Machine) At(p Point, n int, fn func()) {
	seen := 0
	m.Files.SetHook(func(q Point) {
		// Every point waits while fn runs: no sync takes effect and the
		// committer passes no step until the crash image is taken.
		m.hookMu.Lock()
		defer m.hookMu.Unlock()
		if q != p {
			return
		}
		if seen++; seen == n {
			fn()
		}
	})
}

// Disarm removes the crash point.
func (m *Machine) Disarm() { m.Files.SetHook(nil) }

var seedFlag = flag.Uint64("crash.seed", 0, "replay crash tests from this seed (0: a seed from the clock, logged)")

// Seed returns the base seed for a run of randomized crashes: the
// -crash.seed flag when set, else one from the clock. It logs it with the
// flag that replays the run (exactly for single-goroutine workloads; the
// same crash choices for concurrent ones, whose schedule varies).
func Seed(t testing.TB) uint64 {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("crash seed %d (replay: go test -run '^%s$' -crash.seed=%d)", seed, t.Name(), seed)
	return seed
}

// Coverage counts what a run of crashes exercised, so a test can show
// (and demand) that its crashes reach the interesting states.
type Coverage struct {
	Crashes int
	// TornTails: recoveries that truncated a torn or partial tail.
	TornTails int
	// Unacked: entries that survived a crash without having been
	// acknowledged.
	Unacked int
	// InFlight: crashes taken while a group commit was in progress
	// (written entries not yet acknowledged).
	InFlight int
	// RollsBetween: crashes with a segment roll between the two clones.
	RollsBetween int
	// Acked: acknowledged entries checked after recovery.
	Acked int
}

func (c Coverage) String() string {
	return fmt.Sprintf("%d crashes: %d torn tails truncated, %d unacknowledged entries survived, %d crashes with a commit in flight, %d with a segment roll between the clones, %d acknowledged entries checked",
		c.Crashes, c.TornTails, c.Unacked, c.InFlight, c.RollsBetween, c.Acked)
}

// Require logs the figures and fails t when any is below min's.
func (c Coverage) Require(t testing.TB, min Coverage) {
	t.Helper()
	t.Log(c)
	check := func(name string, got, want int) {
		if got < want {
			t.Errorf("coverage: %s %d, want at least %d", name, got, want)
		}
	}
	check("crashes", c.Crashes, min.Crashes)
	check("torn tails", c.TornTails, min.TornTails)
	check("unacknowledged survivors", c.Unacked, min.Unacked)
	check("commits in flight", c.InFlight, min.InFlight)
	check("rolls between clones", c.RollsBetween, min.RollsBetween)
	check("acknowledged entries", c.Acked, min.Acked)
}
