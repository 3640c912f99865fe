package ledger

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage"
)

// entriesPerLedger lists each ledger's durable entry count.
func entriesPerLedger(e *env) []int64 {
	var n []int64
	for _, li := range e.info().Ledgers {
		n = append(n, li.Entries)
	}
	return n
}

func equalCounts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRollBySize: the ledger rolls before an append that would take its
// file past SegmentBytes; exactly reaching it does not roll; an entry
// larger than SegmentBytes goes alone into a ledger; sealed ledgers' file
// bytes never pass SegmentBytes (which pins frameOverhead to storage's
// real frame size).
func TestRollBySize(t *testing.T) {
	const payload = 100
	frame := int64(frameOverhead + payload)
	e := newEnv(t, Config{SegmentBytes: 3 * frame})
	for i := 0; i < 10; i++ {
		e.append(strings.Repeat("x", payload), 1)
	}
	if got, want := entriesPerLedger(e), []int64{3, 3, 3, 1}; !equalCounts(got, want) {
		t.Fatalf("entries per ledger %v, want %v", got, want)
	}
	for _, li := range e.info().Ledgers[:3] {
		if li.Bytes != 3*frame || !li.Sealed {
			t.Fatalf("ledger %v: %d bytes sealed=%v, want %d bytes, sealed", li.ID, li.Bytes, li.Sealed, 3*frame)
		}
	}
	e.append(strings.Repeat("B", 5*payload), 1) // larger than SegmentBytes
	e.append(strings.Repeat("x", payload), 1)
	if got, want := entriesPerLedger(e), []int64{3, 3, 3, 1, 1, 1}; !equalCounts(got, want) {
		t.Fatalf("after a large entry: entries per ledger %v, want %v", got, want)
	}

	// A large first entry in an empty ledger does not roll it.
	e2 := newEnv(t, Config{SegmentBytes: 10})
	e2.append(strings.Repeat("B", 50), 1)
	if got := entriesPerLedger(e2); !equalCounts(got, []int64{1}) {
		t.Fatalf("large first entry: entries per ledger %v, want [1]", got)
	}
}

// TestRollBySizePending: the size policy counts entries written but not
// yet durable, so pipelined writers (Write now, Wait later, as the
// resolver does) roll at the same places.
func TestRollBySizePending(t *testing.T) {
	const payload = 64
	e := newEnv(t, Config{SegmentBytes: 2 * (frameOverhead + payload)})
	var pending []*storage.Pending
	for i := 0; i < 7; i++ {
		p, err := e.m.Write(1, make([]byte, payload), storage.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, p)
	}
	for _, p := range pending {
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := entriesPerLedger(e), []int64{2, 2, 2, 1}; !equalCounts(got, want) {
		t.Fatalf("entries per ledger %v, want %v", got, want)
	}
	for i, p := range pending {
		if got := p.Header().Offset; got != Offset(i) {
			t.Fatalf("write %d at offset %v", i, got)
		}
	}
}

// TestRollByAge: the open ledger rolls on the first append once it is
// older than SegmentAge (by Config.Now), never when empty, and the age of
// a ledger found at Open is storage's creation time.
func TestRollByAge(t *testing.T) {
	e := newEnv(t, Config{SegmentAge: time.Hour})
	clock := e.clock
	e.append("a", 1)
	clock.Advance(30 * time.Minute)
	e.append("b", 1)
	clock.Advance(31 * time.Minute)
	h := e.append("c", 1) // L1 is now 61 minutes old
	if h.Entry != 0 || len(e.ledgerIDs()) != 2 {
		t.Fatalf("c at %v:%v with %d ledgers, want a new ledger", h.Ledger, h.Entry, len(e.ledgerIDs()))
	}
	// L2 was rolled at the fake clock's time: exactly SegmentAge old is
	// not older than SegmentAge.
	clock.Advance(time.Hour)
	if h := e.append("d", 1); h.Entry != 1 {
		t.Fatalf("d at entry %v, want 1 (no roll at exactly SegmentAge)", h.Entry)
	}
	clock.Advance(time.Nanosecond)
	if h := e.append("e", 1); h.Entry != 0 || len(e.ledgerIDs()) != 3 {
		t.Fatalf("e at entry %v with %d ledgers, want a roll", h.Entry, len(e.ledgerIDs()))
	}
	// An empty open ledger is never rolled, however old.
	e.roll()
	clock.Advance(5 * time.Hour)
	if h := e.append("f", 1); h.Entry != 0 || len(e.ledgerIDs()) != 4 {
		t.Fatalf("f at entry %v with %d ledgers, want 4 ledgers", h.Entry, len(e.ledgerIDs()))
	}
	// After a reopen the open ledger's age comes from storage.
	e.reopen()
	clock.Advance(2 * time.Hour)
	if h := e.append("g", 1); h.Entry != 0 || len(e.ledgerIDs()) != 5 {
		t.Fatalf("g after reopen at entry %v with %d ledgers, want a roll", h.Entry, len(e.ledgerIDs()))
	}
	if got := payloads(e.read(Earliest, 100, 1<<20, NoLimit)); strings.Count(got, "=") != 7 {
		t.Fatalf("read back %s", got)
	}
}

func TestConfigValidate(t *testing.T) {
	err := Config{SegmentBytes: -1, SegmentAge: -time.Second}.Validate()
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "segment bytes") || !strings.Contains(err.Error(), "segment age") {
		t.Fatalf("Validate: %v, want both problems", err)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Fatal(err)
	}
	c := Config{}.withDefaults()
	if c.SegmentBytes != DefaultSegmentBytes || c.SegmentAge != DefaultSegmentAge || c.Now == nil {
		t.Fatalf("defaults: %+v", c)
	}
}

// TestOpenCreatesLogAndReopens: Open creates a missing log; a second
// Managed over the same log sees the same entries.
func TestOpenCreatesLogAndReopens(t *testing.T) {
	e := newEnv(t, Config{})
	e.append("a", 1)
	e.reopen()
	if got := payloads(e.read(Earliest, 10, 100, NoLimit)); !strings.HasSuffix(got, "=a") {
		t.Fatalf("after reopen: %q", got)
	}
	if e.m.Log() != testLog {
		t.Fatalf("Log() = %v", e.m.Log())
	}
	if _, err := Open(e.store, testLog, Config{SegmentBytes: -1}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Open with a bad config: %v", err)
	}
}
