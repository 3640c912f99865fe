package resolver

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/resolver/txnstate"
)

// txnState renders a partition's transaction state, both views, for
// comparing before and after a restart (transaction recovery).
func txnState(t *testing.T, g *gateway, topic string, part int32) string {
	t.Helper()
	p, err := g.r.mu.partition(topic, part)
	if err != nil {
		t.Fatal(err)
	}
	p.app.Lock()
	defer p.app.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	var open []string
	for pid, e := range p.app.txn.Open {
		if e.First >= 0 {
			open = append(open, fmt.Sprintf("%d@%d/e%d", pid, e.First, e.Epoch))
		}
	}
	slices.Sort(open)
	var view []string
	for first, pid := range p.mu.txn.Open {
		view = append(view, fmt.Sprintf("%d@%d", pid, first))
	}
	slices.Sort(view)
	aborted := make([]string, 0, len(p.mu.txn.Aborted))
	for _, a := range p.mu.txn.Aborted {
		aborted = append(aborted, fmt.Sprintf("{%d %d %d}", a.PID, int64(a.First), int64(a.Last)))
	}
	return fmt.Sprintf("open %v view %v first %d aborted [%s]", open, view, p.mu.txn.FirstOpen, strings.Join(aborted, " "))
}

// persistedAborted counts the aborted-index keys of a partition's log.
func persistedAborted(t *testing.T, g *gateway, topic string) int {
	t.Helper()
	p, _ := g.r.mu.partition(topic, 0)
	n := 0
	if err := g.store.ScanMeta(idKey(txnstate.PrefixAborted, uint64(p.log)), func(_, _ []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// Transaction recovery: open transactions, the LSO and the aborted index are rebuilt exactly
// after a clean restart, after a crash with no checkpoint since they
// changed, and after a crash with a checkpoint covering part of them; the
// open transaction then goes on without a new registration.
func TestTxnStateSurvivesRestart(t *testing.T) {
	for _, mode := range []string{"reopen", "crash", "crash-after-checkpoint"} {
		t.Run(mode, func(t *testing.T) {
			g := newGateway(t, Config{})
			g.create("t", 1, nil)
			reg := func(pid int64) {
				if err := g.r.AddTxnPartition("t", 0, pid, 0); err != nil {
					t.Fatal(err)
				}
			}
			reg(1)
			reg(2)
			g.produce("t", 0, txnBatch(2, 0, 0, 1).encode()) // 0: aborted below
			g.produce("t", 0, txnBatch(1, 0, 0, 2).encode()) // 1-2: stays open
			if err := g.r.WriteTxnMarker("t", 0, 2, 0, false, 0); err != nil {
				t.Fatal(err)
			}
			if mode == "crash-after-checkpoint" {
				p, _ := g.r.mu.partition("t", 0)
				if err := g.r.states.checkpoint(p); err != nil {
					t.Fatal(err)
				}
			}
			reg(3)
			g.produce("t", 0, txnBatch(3, 0, 0, 1).encode()) // 4: aborted below
			g.produce("t", 0, plain(1, 1).encode())          // 5
			if err := g.r.WriteTxnMarker("t", 0, 3, 0, false, 0); err != nil {
				t.Fatal(err)
			}
			reg(4)
			g.produce("t", 0, txnBatch(4, 0, 0, 1).encode()) // 7: committed
			if err := g.r.WriteTxnMarker("t", 0, 4, 0, true, 0); err != nil {
				t.Fatal(err)
			}
			before := txnState(t, g, "t", 0)
			_, hwm, lso, _ := g.r.Bounds("t", 0)
			if lso != 1 || hwm != 9 {
				t.Fatalf("before: hwm %d lso %d, want 9 1", hwm, lso)
			}
			if mode == "reopen" {
				g.reopen()
			} else {
				g.crashReopen()
			}
			if after := txnState(t, g, "t", 0); after != before {
				t.Fatalf("transaction state\n before %s\n after  %s", before, after)
			}
			if _, h, l, _ := g.r.Bounds("t", 0); h != hwm || l != lso {
				t.Fatalf("after: hwm %d lso %d, want %d %d", h, l, hwm, lso)
			}
			// The open transaction goes on (its batch is accepted without a
			// registration) and commits.
			g.produce("t", 0, txnBatch(1, 0, 2, 1).encode())
			if err := g.r.WriteTxnMarker("t", 0, 1, 0, true, 0); err != nil {
				t.Fatal(err)
			}
			got, _ := committedRead(t, g.r, "t", 0, 1)
			want := []batchKey{{1, 0}, {-1, 5}, {4, 0}, {1, 2}}
			if !slices.Equal(got, want) {
				t.Fatalf("delivered %v, want %v", got, want)
			}
			g.reopen()
			if got2, _ := committedRead(t, g.r, "t", 0, 1<<20); !slices.Equal(got2, want) {
				t.Fatalf("after a second restart: %v", got2)
			}
			if n := persistedAborted(t, g, "t"); n != 2 {
				t.Fatalf("%d aborted keys persisted, want 2", n)
			}
			// Deleting the topic deletes its transaction keys.
			reg(9)
			g.produce("t", 0, txnBatch(9, 0, 0, 1).encode())
			p, _ := g.r.mu.partition("t", 0)
			if err := g.r.states.checkpoint(p); err != nil {
				t.Fatal(err)
			}
			if err := g.r.DeleteTopic("t"); err != nil {
				t.Fatal(err)
			}
			for _, prefix := range [][]byte{txnstate.PrefixOpen, txnstate.PrefixAborted} {
				if err := g.store.ScanMeta(prefix, func(k, _ []byte) error { return fmt.Errorf("key %q left", k) }); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// The aborted-transaction index: aborted data stays invisible to read_committed across ledger rolls,
// DeleteRecords and retention (also when the log start falls inside an
// aborted transaction) and restarts; an aborted-index entry goes, in
// memory and on disk, once the log start passes its marker.
func TestTxnAbortedAcrossRollsAndRetention(t *testing.T) {
	c := fixedClock(10_000)
	g := retentionGateway(t, c)
	// About two batches per ledger.
	g.create("t", 1, map[string]string{"segment.bytes": "250", "retention.ms": "1000"})
	txn := func(pid int64, n int, commit bool, ts int64) {
		t.Helper()
		if err := g.r.AddTxnPartition("t", 0, pid, 0); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			tb := txnBatch(pid, 0, int32(i), 1)
			tb.baseTS = ts
			g.produce("t", 0, tb.encode())
			g.produce("t", 0, plain(1, ts).encode())
		}
		c.set(ts)
		if err := g.r.WriteTxnMarker("t", 0, pid, 0, commit, 0); err != nil {
			t.Fatal(err)
		}
	}
	txn(1, 3, false, 1000) // 0-6: aborted, marker at 6
	txn(2, 2, true, 2000)  // 7-11
	txn(3, 3, false, 3000) // 12-18: aborted, marker at 18
	// A ledger boundary at 19, for retention below.
	if p, _ := g.r.mu.partition("t", 0); p != nil {
		if _, err := p.mu.ml.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	txn(4, 2, false, 9000) // 19-23: aborted, marker at 23
	if info := logInfo(t, g, "t"); len(info.Ledgers) < 6 {
		t.Fatalf("want many ledgers, got %d", len(info.Ledgers))
	}
	want := func(start Offset) []batchKey {
		var out []batchKey
		for _, off := range []Offset{1, 3, 5, 8, 10, 13, 15, 17, 20, 22} {
			if off >= start {
				out = append(out, batchKey{-1, int64(off)})
			}
		}
		for _, k := range []batchKey{{2, 0}, {2, 1}} {
			if off := map[int64]Offset{0: 7, 1: 9}[k.seq]; off >= start {
				i := slices.IndexFunc(out, func(x batchKey) bool { return x.pid == -1 && Offset(x.seq) > off })
				out = slices.Insert(out, i, k)
			}
		}
		return out
	}
	check := func(what string) {
		t.Helper()
		start, _, _, _ := g.r.Bounds("t", 0)
		for _, maxBytes := range []int{1, 1 << 20} {
			if got, _ := committedRead(t, g.r, "t", 0, maxBytes); !slices.Equal(got, want(start)) {
				t.Fatalf("%s (start %d, max bytes %d): delivered %v, want %v", what, start, maxBytes, got, want(start))
			}
		}
	}
	check("rolled")
	if n := persistedAborted(t, g, "t"); n != 0 {
		// Written by checkpoints only (the aborted-transaction index): none yet, the log is the record.
		t.Logf("%d aborted keys before the first checkpoint", n)
	}
	g.crashReopen()
	check("after a crash")
	g.reopen()
	check("after a restart")
	if n := persistedAborted(t, g, "t"); n != 3 {
		t.Fatalf("%d aborted keys after Close's checkpoint, want 3", n)
	}
	// The log start inside the second aborted transaction: its remaining
	// batches stay invisible.
	if _, err := g.r.DeleteRecords("t", 0, 14); err != nil {
		t.Fatal(err)
	}
	check("start inside an aborted transaction")
	if s := txnState(t, g, "t", 0); !strings.Contains(s, "aborted [{3 12 18} {4 19 23}]") {
		t.Fatalf("the first entry is not pruned: %s", s)
	}
	g.crashReopen()
	check("start inside an aborted transaction, after a crash")
	// Retention by time passes the second aborted transaction too.
	if err := g.r.Passes().RunRetention(time.UnixMilli(9500)); err != nil {
		t.Fatal(err)
	}
	start, _, _, _ := g.r.Bounds("t", 0)
	if start != 19 {
		t.Fatalf("retention kept the log from %d", start)
	}
	check("after retention")
	g.reopen()
	check("after retention and a restart")
	if n := persistedAborted(t, g, "t"); n != 1 {
		t.Fatalf("%d aborted keys after retention, want 1: %s", n, txnState(t, g, "t", 0))
	}
}

// Transaction recovery: a transaction whose marker is trimmed away (DeleteRecords, retention)
// before any checkpoint covered the marker is still ended after a crash:
// a trim first checkpoints what it is about to remove.
func TestTxnEndedBeforeTrimStaysEnded(t *testing.T) {
	for _, how := range []string{"delete-records", "retention"} {
		t.Run(how, func(t *testing.T) {
			c := fixedClock(10_000)
			g := retentionGateway(t, c)
			g.create("t", 1, map[string]string{"segment.bytes": "250", "retention.ms": "1000"})
			if err := g.r.AddTxnPartition("t", 0, 1, 0); err != nil {
				t.Fatal(err)
			}
			g.produce("t", 0, txnBatch(1, 0, 0, 1).encode()) // 0
			p, _ := g.r.mu.partition("t", 0)
			if err := g.r.states.checkpoint(p); err != nil { // covers the open transaction
				t.Fatal(err)
			}
			if err := g.r.WriteTxnMarker("t", 0, 1, 0, true, 0); err != nil { // 1
				t.Fatal(err)
			}
			for range 4 {
				g.produce("t", 0, plain(1, 1000).encode())
			}
			if _, err := p.mu.ml.Roll(); err != nil {
				t.Fatal(err)
			}
			g.produce("t", 0, plain(1, 20_000).encode())
			_, end, _, _ := g.r.Bounds("t", 0)
			switch how {
			case "delete-records":
				if _, err := g.r.DeleteRecords("t", 0, end-1); err != nil {
					t.Fatal(err)
				}
			default:
				if err := g.r.Passes().RunRetention(time.UnixMilli(19_500)); err != nil {
					t.Fatal(err)
				}
			}
			start, _, _, _ := g.r.Bounds("t", 0)
			if start <= 1 {
				t.Fatalf("the marker at 1 was not trimmed: log start %d", start)
			}
			g.crashReopen()
			if _, hwm, lso, _ := g.r.Bounds("t", 0); lso != hwm {
				t.Fatalf("after the crash: LSO %d, end %d: the committed transaction is open again", lso, hwm)
			}
		})
	}
}
