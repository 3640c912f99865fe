package tiertest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
)

// OpenMeta opens a fresh, empty metadata store for one test and returns
// two handles on it, as two nodes would hold: for a shared implementation
// (etcd) two clients; for one a single process owns (pebble), the same
// handle twice.
type OpenMeta func(t *testing.T) (a, b tier.Meta)

// MetaConformance runs the contract of tier.Meta (tier meta.go,
// rule B1) against an implementation: records, versions and their
// compare-and-swap, order, pins, visibility between the two handles, and
// concurrent compare-and-swaps of which exactly one wins.
func MetaConformance(t *testing.T, open OpenMeta) {
	tests := []struct {
		name string
		fn   func(t *testing.T, a, b tier.Meta)
	}{
		{"GetMissing", metaGetMissing},
		{"PutRoundTrip", metaPutRoundTrip},
		{"PutCompareAndSwap", metaPutCAS},
		{"DeleteCompareAndSwap", metaDeleteCAS},
		{"ListOrder", metaListOrder},
		{"Pins", metaPins},
		{"ConcurrentPut", metaConcurrentPut},
		{"ConcurrentCreate", metaConcurrentCreate},
		{"ConcurrentDeleteAndPut", metaConcurrentDeleteAndPut},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := open(t)
			tc.fn(t, a, b)
		})
	}
}

// SampleObject is a record with every field set, for (log, led).
func SampleObject(log storage.LogID, led storage.LedgerID) tier.Object {
	return tier.Object{
		Log: log, Ledger: led, Gen: 3, State: tier.Uploading,
		Key:   fmt.Sprintf("p/%d/%d-pub.kgo", log, led),
		PubID: "pub", Owner: "node-a",
		FirstOffset: 100, EndOffset: 250, Entries: 12, MaxTime: 1700000000000,
		FramesBytes: 4096, IndexBytes: 384, Size: 4524,
		FramesSHA: "aa", IndexSHA: "bb",
		LeaseUntil: time.Unix(1700000000, 5).UnixNano(), Created: time.Unix(1600000000, 7).UnixNano(),
	}
}

func mustPut(t *testing.T, m tier.Meta, o tier.Object) tier.Object {
	t.Helper()
	got, err := m.Put(o)
	if err != nil {
		t.Fatalf("put %v %v at version %d: %v", o.Log, o.Ledger, o.Version, err)
	}
	return got
}

func mustGet(t *testing.T, m tier.Meta, log storage.LogID, led storage.LedgerID) tier.Object {
	t.Helper()
	got, err := m.Get(log, led)
	if err != nil {
		t.Fatalf("get %v %v: %v", log, led, err)
	}
	return got
}

func metaGetMissing(t *testing.T, a, b tier.Meta) {
	if _, err := a.Get(1, 2); !errors.Is(err, tier.ErrNoObject) {
		t.Fatalf("get of nothing: %v, want ErrNoObject", err)
	}
	if objs, err := b.List(); err != nil || len(objs) != 0 {
		t.Fatalf("list of nothing: %v, %v", objs, err)
	}
}

// metaPutRoundTrip: every field comes back, on the other handle too, and
// the version Put returns is the one Get and List report.
func metaPutRoundTrip(t *testing.T, a, b tier.Meta) {
	o := SampleObject(1, 2)
	got := mustPut(t, a, o)
	if got.Version == 0 {
		t.Fatal("put returned version 0")
	}
	want := o
	want.Version = got.Version
	if got != want {
		t.Fatalf("put returned\n%+v, want\n%+v", got, want)
	}
	if read := mustGet(t, b, 1, 2); read != want {
		t.Fatalf("get on the other handle\n%+v, want\n%+v", read, want)
	}
	objs, err := b.List()
	if err != nil || len(objs) != 1 || objs[0] != want {
		t.Fatalf("list: %+v, %v", objs, err)
	}
}

// metaPutCAS: Put succeeds only at the stored version (0: none), and each
// success moves the version, so the previous one conflicts (B1).
func metaPutCAS(t *testing.T, a, b tier.Meta) {
	v1 := mustPut(t, a, SampleObject(1, 2))
	if _, err := b.Put(SampleObject(1, 2)); !errors.Is(err, tier.ErrConflict) {
		t.Fatalf("second create: %v, want ErrConflict", err)
	}
	stale := v1
	stale.Version++
	if _, err := b.Put(stale); !errors.Is(err, tier.ErrConflict) {
		t.Fatalf("put at a version never stored: %v, want ErrConflict", err)
	}
	next := v1
	next.State = tier.Published
	v2 := mustPut(t, b, next)
	if v2.Version == v1.Version {
		t.Fatalf("version %d unchanged by a put", v2.Version)
	}
	again := v1
	again.State = tier.Deleting
	if _, err := a.Put(again); !errors.Is(err, tier.ErrConflict) {
		t.Fatalf("put at the replaced version %d: %v, want ErrConflict", v1.Version, err)
	}
	if cur := mustGet(t, a, 1, 2); cur != v2 {
		t.Fatalf("after a lost put: %+v, want %+v", cur, v2)
	}
}

// metaDeleteCAS: Delete succeeds only at the stored version; a missing
// record is ErrNoObject; a deleted record can be created again (version
// 0), and the version it had before conflicts.
func metaDeleteCAS(t *testing.T, a, b tier.Meta) {
	for _, v := range []uint64{0, 1} {
		if err := a.Delete(1, 2, v); !errors.Is(err, tier.ErrNoObject) {
			t.Fatalf("delete of nothing at version %d: %v, want ErrNoObject", v, err)
		}
	}
	v1 := mustPut(t, a, SampleObject(1, 2))
	o := v1
	o.State = tier.Published
	v2 := mustPut(t, a, o)
	if err := b.Delete(1, 2, v1.Version); !errors.Is(err, tier.ErrConflict) {
		t.Fatalf("delete at the replaced version: %v, want ErrConflict", err)
	}
	mustGet(t, a, 1, 2)
	if err := b.Delete(1, 2, v2.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(1, 2); !errors.Is(err, tier.ErrNoObject) {
		t.Fatalf("get after delete: %v, want ErrNoObject", err)
	}
	if err := a.Delete(1, 2, v2.Version); !errors.Is(err, tier.ErrNoObject) {
		t.Fatalf("second delete: %v, want ErrNoObject", err)
	}
	if _, err := a.Put(v2); !errors.Is(err, tier.ErrConflict) {
		t.Fatalf("put at a deleted record's version: %v, want ErrConflict", err)
	}
	o.Version = 0
	mustPut(t, b, o)
}

// metaListOrder: List is in (log, ledger) numeric order, whatever the
// insertion order and however wide the ids.
func metaListOrder(t *testing.T, a, b tier.Meta) {
	ids := [][2]uint64{{2, 1}, {1, 10}, {1, 2}, {1 << 40, 0}, {1, 1 << 63}, {10, 3}, {1, 9}, {0, 0}}
	for _, id := range ids {
		mustPut(t, a, SampleObject(storage.LogID(id[0]), storage.LedgerID(id[1])))
	}
	objs, err := b.List()
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]uint64
	for _, o := range objs {
		got = append(got, [2]uint64{uint64(o.Log), uint64(o.Ledger)})
		if cur := mustGet(t, a, o.Log, o.Ledger); cur != o {
			t.Fatalf("listed %+v, get %+v", o, cur)
		}
	}
	want := slices.Clone(ids)
	slices.SortFunc(want, func(x, y [2]uint64) int {
		if x[0] != y[0] {
			return compare(x[0], y[0])
		}
		return compare(x[1], y[1])
	})
	if !slices.Equal(got, want) {
		t.Fatalf("list order %v, want %v", got, want)
	}
}

func compare(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// metaPins: a pin is stored before AddPin returns and seen by the other
// handle (a deleter on another node sees a reader's pin, B6); Pins lists
// one object's pins only, expired ones included; RemovePin removes one,
// and removing none is no error.
func metaPins(t *testing.T, a, b tier.Meta) {
	now := time.Now()
	live := tier.Pin{Key: "p/1/2-x.kgo", ID: "r1", Owner: "node-a", Expires: now.Add(time.Hour).UnixNano()}
	expired := tier.Pin{Key: "p/1/2-x.kgo", ID: "r2", Owner: "node-a", Expires: now.Add(-time.Second).UnixNano()}
	other := tier.Pin{Key: "p/1/2-x.kgo2", ID: "r1", Owner: "node-b", Expires: now.Add(time.Hour).UnixNano()}
	prefix := tier.Pin{Key: "p/1/2-x.kg", ID: "r3", Owner: "node-b", Expires: now.Add(time.Hour).UnixNano()}
	for _, p := range []tier.Pin{live, expired} {
		if err := a.AddPin(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []tier.Pin{other, prefix} {
		if err := b.AddPin(p); err != nil {
			t.Fatal(err)
		}
	}
	checkPins(t, "pins of the object", b.Pins, live.Key, live, expired)
	checkPins(t, "pins of a longer name", a.Pins, other.Key, other)
	all, err := a.AllPins()
	if err != nil {
		t.Fatal(err)
	}
	if !samePins(all, []tier.Pin{live, expired, other, prefix}) {
		t.Fatalf("all pins %+v", all)
	}
	if !live.Live(now) || expired.Live(now) {
		t.Fatal("Pin.Live")
	}
	if err := b.RemovePin(live.Key, live.ID); err != nil {
		t.Fatal(err)
	}
	checkPins(t, "pins after a removal", a.Pins, live.Key, expired)
	if err := a.RemovePin(live.Key, live.ID); err != nil {
		t.Fatalf("removing a removed pin: %v", err)
	}
	if err := a.RemovePin("no-such-object", "x"); err != nil {
		t.Fatalf("removing a pin never added: %v", err)
	}
}

func checkPins(t *testing.T, what string, pins func(string) ([]tier.Pin, error), key string, want ...tier.Pin) {
	t.Helper()
	got, err := pins(key)
	if err != nil {
		t.Fatal(err)
	}
	if !samePins(got, want) {
		t.Fatalf("%s: %+v, want %+v", what, got, want)
	}
}

func samePins(got, want []tier.Pin) bool {
	if len(got) != len(want) {
		return false
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

// race runs fn(handle, i) from n goroutines on each handle at once and
// returns each call's error.
func race(a, b tier.Meta, n int, fn func(m tier.Meta, i int) error) []error {
	errs := make([]error, 2*n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range errs {
		m := a
		if i%2 == 1 {
			m = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(m, i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// oneWinner fails unless exactly one call succeeded and every other lost
// with one of lost.
func oneWinner(t *testing.T, errs []error, lost ...error) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("two compare-and-swaps won: callers %d and %d", winner, i)
		case err == nil:
			winner = i
		case !slices.ContainsFunc(lost, func(l error) bool { return errors.Is(err, l) }):
			t.Fatalf("caller %d: %v, want one of %v", i, err, lost)
		}
	}
	if winner < 0 {
		t.Fatal("no compare-and-swap won")
	}
	return winner
}

// metaConcurrentPut: callers on both handles put at the same version at
// once; exactly one wins each round, and the record is the winner's.
func metaConcurrentPut(t *testing.T, a, b tier.Meta) {
	cur := mustPut(t, a, SampleObject(1, 2))
	for round := 0; round < 10; round++ {
		results := make([]tier.Object, 8)
		errs := race(a, b, 4, func(m tier.Meta, i int) error {
			o := cur
			o.Owner = fmt.Sprintf("caller-%d", i)
			var err error
			results[i], err = m.Put(o)
			return err
		})
		w := oneWinner(t, errs, tier.ErrConflict)
		stored := mustGet(t, b, 1, 2)
		if stored != results[w] || stored.Owner != fmt.Sprintf("caller-%d", w) {
			t.Fatalf("round %d: stored %+v, winner %d put %+v", round, stored, w, results[w])
		}
		cur = stored
	}
}

// metaConcurrentCreate: callers create the same record at once (version
// 0); exactly one wins.
func metaConcurrentCreate(t *testing.T, a, b tier.Meta) {
	for led := storage.LedgerID(0); led < 5; led++ {
		errs := race(a, b, 4, func(m tier.Meta, i int) error {
			o := SampleObject(1, led)
			o.Owner = fmt.Sprintf("caller-%d", i)
			_, err := m.Put(o)
			return err
		})
		w := oneWinner(t, errs, tier.ErrConflict)
		if got := mustGet(t, a, 1, led); got.Owner != fmt.Sprintf("caller-%d", w) {
			t.Fatalf("ledger %v: owner %q, winner %d", led, got.Owner, w)
		}
	}
}

// metaConcurrentDeleteAndPut: a delete and puts at the same version race;
// exactly one wins (a reaper deleting and an uploader taking a record
// over cannot both succeed).
func metaConcurrentDeleteAndPut(t *testing.T, a, b tier.Meta) {
	for led := storage.LedgerID(0); led < 5; led++ {
		cur := mustPut(t, a, SampleObject(1, led))
		errs := race(a, b, 2, func(m tier.Meta, i int) error {
			if i == 0 {
				return m.Delete(1, led, cur.Version)
			}
			o := cur
			o.Owner = fmt.Sprintf("caller-%d", i)
			_, err := m.Put(o)
			return err
		})
		w := oneWinner(t, errs, tier.ErrConflict, tier.ErrNoObject)
		got, err := a.Get(1, led)
		switch {
		case w == 0 && !errors.Is(err, tier.ErrNoObject):
			t.Fatalf("ledger %v: delete won, record %+v, %v", led, got, err)
		case w != 0 && (err != nil || got.Owner != fmt.Sprintf("caller-%d", w)):
			t.Fatalf("ledger %v: put %d won, record %+v, %v", led, w, got, err)
		}
	}
}
