package resolver

import (
	"errors"
	"math/bits"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/topicconfig"
)

// retentionGateway is a resolver with an injected clock and no background
// retention pass (the tests call RunRetention themselves).
func retentionGateway(t *testing.T, c *clock) *gateway {
	return newGateway(t, Config{Ledger: ledgerNow(c), RetentionCheckInterval: -1})
}

// produceTimes appends one single-record batch per timestamp.
func produceTimes(g *gateway, topic string, ts ...int64) {
	g.t.Helper()
	for _, x := range ts {
		g.produce(topic, 0, plain(1, x).encode())
	}
}

func logInfo(t *testing.T, g *gateway, topic string) storage.LogInfo {
	t.Helper()
	info, err := g.store.Info(mustTopic(t, g.r, topic).parts[0].log)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func segmentExists(t *testing.T, g *gateway, log storage.LogID, led storage.LedgerID) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(g.dir, "segments", storage.SegmentFileName(log, led)))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// Whole sealed ledgers only, time retention, the expired open ledger, the log start before the files: expired whole sealed ledgers go (files and index), the
// log start moves to a ledger boundary, reads below it are out of range,
// and an entirely expired open ledger is rolled and removed too.
func TestRetentionByTime(t *testing.T) {
	c := fixedClock(10_000)
	g := retentionGateway(t, c)
	// Each one-record batch is ~100 file bytes: two per ledger.
	g.create("t", 1, map[string]string{"segment.bytes": "250", "retention.ms": "1000"})
	produceTimes(g, "t", 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009)
	before := logInfo(t, g, "t")
	if len(before.Ledgers) < 4 {
		t.Fatalf("want several ledgers, got %+v", before.Ledgers)
	}
	log := mustTopic(t, g.r, "t").parts[0].log

	// Cutoff 1005: offsets 0..4 are expired; only whole sealed ledgers go.
	if err := g.r.Passes().RunRetention(time.UnixMilli(2005)); err != nil {
		t.Fatal(err)
	}
	after := logInfo(t, g, "t")
	if after.Start == 0 || after.Start > 5 {
		t.Fatalf("log start %d, want a ledger boundary in (0, 5]", after.Start)
	}
	if after.Ledgers[0].FirstOffset != after.Start {
		t.Fatalf("first ledger starts at %d, log start %d", after.Ledgers[0].FirstOffset, after.Start)
	}
	for _, l := range before.Ledgers {
		gone := l.ID < after.Ledgers[0].ID
		if segmentExists(t, g, log, l.ID) == gone {
			t.Fatalf("ledger %v: file exists=%v, removed=%v", l.ID, !gone, gone)
		}
	}
	if _, err := g.r.Fetch("t", 0, 0, 1<<20, true, ReadUncommitted); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("fetch below start: %v", err)
	}
	if res := g.fetch("t", 0, after.Start, 1<<20); len(res.Batches) == 0 || res.LogStart != after.Start {
		t.Fatalf("fetch at start: %+v", res)
	}
	if off, _, _ := g.r.ListOffset("t", 0, -2); off != after.Start {
		t.Fatalf("earliest %d, want %d", off, after.Start)
	}

	// Everything expired: the open ledger is rolled and removed as well.
	if err := g.r.Passes().RunRetention(time.UnixMilli(100_000)); err != nil {
		t.Fatal(err)
	}
	all := logInfo(t, g, "t")
	if all.Start != 10 || all.End != 10 || len(all.Ledgers) != 1 || all.Ledgers[0].Entries != 0 {
		t.Fatalf("after full expiry: %+v", all)
	}
	if res := g.produce("t", 0, plain(1, 99_000).encode()); res.BaseOffset != 10 || res.LogStart != 10 {
		t.Fatalf("produce after full expiry: %+v", res)
	}
	g.reopen()
	if info := logInfo(t, g, "t"); info.Start != 10 || info.End != 11 {
		t.Fatalf("after reopen: %+v", info)
	}
}

// The expired open ledger: unexpired data in the open ledger is never removed, even when older
// entries in the same ledger have expired.
func TestRetentionKeepsOpenLedgerData(t *testing.T) {
	c := fixedClock(10_000)
	g := retentionGateway(t, c)
	g.create("t", 1, map[string]string{"retention.ms": "1000"})
	produceTimes(g, "t", 1000, 1001, 5000)
	if err := g.r.Passes().RunRetention(time.UnixMilli(4000)); err != nil {
		t.Fatal(err)
	}
	if info := logInfo(t, g, "t"); info.Start != 0 || len(info.Ledgers) != 1 {
		t.Fatalf("trimmed unexpired data: %+v", info)
	}
	// retention.ms -1 keeps everything forever.
	if err := g.r.AlterTopicConfigs("t", map[string]string{"retention.ms": "-1"}, false); err != nil {
		t.Fatal(err)
	}
	if err := g.r.Passes().RunRetention(time.UnixMilli(1 << 50)); err != nil {
		t.Fatal(err)
	}
	if info := logInfo(t, g, "t"); info.Start != 0 {
		t.Fatalf("retention.ms=-1 trimmed: %+v", info)
	}
}

// Size retention: the oldest sealed ledgers go while what is left stays at least
// retention.bytes.
func TestRetentionByBytes(t *testing.T) {
	c := fixedClock(10_000)
	g := retentionGateway(t, c)
	g.create("t", 1, map[string]string{"segment.bytes": "250", "retention.bytes": "450", "retention.ms": "-1"})
	produceTimes(g, "t", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	if err := g.r.Passes().RunRetention(c.now()); err != nil {
		t.Fatal(err)
	}
	info := logInfo(t, g, "t")
	var total int64
	for _, l := range info.Ledgers {
		total += l.Bytes
	}
	if info.Start == 0 || total < 450 || total-info.Ledgers[0].Bytes >= 450 {
		t.Fatalf("start %d, %d bytes left in %+v", info.Start, total, info.Ledgers)
	}
}

// Ledgers below the log start and DeleteRecords: the log start moves to the requested offset (-1:
// the high watermark), whole ledgers below it go, reads below it are out
// of range, and an offset past the high watermark is refused.
func TestDeleteRecords(t *testing.T) {
	c := fixedClock(10_000)
	g := retentionGateway(t, c)
	g.create("t", 1, map[string]string{"segment.bytes": "250"})
	produceTimes(g, "t", 1, 2, 3, 4, 5, 6)
	if _, err := g.r.DeleteRecords("t", 0, 7); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("past hwm: %v", err)
	}
	if _, err := g.r.DeleteRecords("t", 0, -2); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("offset -2: %v", err)
	}
	low, err := g.r.DeleteRecords("t", 0, 3)
	if err != nil || low != 3 {
		t.Fatalf("delete below 3: %d %v", low, err)
	}
	info := logInfo(t, g, "t")
	if info.Start != 3 || info.Ledgers[0].FirstOffset > 3 || len(info.Ledgers) > 3 {
		t.Fatalf("after delete: %+v", info)
	}
	if _, err := g.r.Fetch("t", 0, 2, 1<<20, true, ReadUncommitted); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("fetch below low watermark: %v", err)
	}
	if low, err := g.r.DeleteRecords("t", 0, 1); err != nil || low != 3 {
		t.Fatalf("delete backwards: %d %v", low, err)
	}
	if low, err := g.r.DeleteRecords("t", 0, -1); err != nil || low != 6 {
		t.Fatalf("delete to hwm: %d %v", low, err)
	}
	if _, err := g.r.DeleteRecords("nope", 0, 1); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("unknown topic: %v", err)
	}
}

// The background pass runs every log.retention.check.interval.ms with the
// resolver's clock.
func TestRetentionLoop(t *testing.T) {
	c := fixedClock(10_000)
	g := newGateway(t, Config{Ledger: ledgerNow(c), RetentionCheckInterval: time.Millisecond})
	g.create("t", 1, map[string]string{"segment.bytes": "250", "retention.ms": "1000"})
	produceTimes(g, "t", 1, 2, 3, 4)
	deadline := time.After(10 * time.Second)
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for logInfo(t, g, "t").Start == 0 {
		select {
		case <-deadline:
			t.Fatal("background retention never trimmed")
		case <-poll.C:
		}
	}
}

// A timestamp lookup is a seek in the time index plus one in the entry
// index: a constant number of index probes, far below log2(n), on a log
// of 100k entries.
func TestListOffsetByTimeProbes(t *testing.T) {
	const n, perCall = 100_000, 1000
	var indexProbes atomic.Int64
	g := newGatewayOpts(t, Config{RetentionCheckInterval: -1},
		storage.Options{OnIndexProbes: func(n int) { indexProbes.Add(int64(n)) }})
	g.create("t", 1, nil)
	for call := 0; call < n/perCall; call++ {
		// One batch per produce; pipelined so that one group commit
		// covers perCall of them.
		pend := make([]*PendingProduce, 0, perCall)
		for i := 0; i < perCall; i++ {
			pp, err := g.r.ProduceAsync("t", 0, plain(1, int64(2*(call*perCall+i))).encode())
			if err != nil {
				t.Fatal(err)
			}
			pend = append(pend, pp)
		}
		for _, pp := range pend {
			if _, err := pp.Wait(); err != nil {
				t.Fatal(err)
			}
		}
	}
	maxProbes := int64(bits.Len(n)) // log2(n) ~ 17
	var worst int64
	for _, ts := range []int64{0, 1, 2, 12345, 99_999, 100_000, 150_001, 2*n - 2, 2*n - 1} {
		before := indexProbes.Load()
		off, got, err := g.r.ListOffset("t", 0, ts)
		probes := indexProbes.Load() - before
		worst = max(worst, probes)
		if err != nil {
			t.Fatal(err)
		}
		want := Offset((ts + 1) / 2) // entry i has timestamp 2i
		if ts > 2*n-2 {
			want = -1
		}
		if off != want || (want >= 0 && got != int64(2*want)) {
			t.Fatalf("ListOffset(%d) = %d@%d, want %d", ts, off, got, want)
		}
		if probes == 0 || probes > 3 || probes > maxProbes { // 0: not counted at all
			t.Fatalf("ListOffset(%d) took %d index probes", ts, probes)
		}
	}
	t.Logf("%d entries: at most %d index probes per timestamp lookup", n, worst)
}

// Rollover follows segment.bytes, and altering it takes effect.
func TestSegmentBytesAlter(t *testing.T) {
	g := newGateway(t, Config{RetentionCheckInterval: -1, Ledger: ledger.Config{}})
	g.create("t", 1, nil)
	produceTimes(g, "t", 1, 2, 3, 4)
	if n := len(logInfo(t, g, "t").Ledgers); n != 1 {
		t.Fatalf("%d ledgers before alter", n)
	}
	if err := g.r.IncrementalAlterTopicConfigs("t", []topicconfig.Op{{Name: "segment.bytes", Op: topicconfig.OpSet, Value: "250"}}, false); err != nil {
		t.Fatal(err)
	}
	produceTimes(g, "t", 5, 6, 7, 8)
	if n := len(logInfo(t, g, "t").Ledgers); n < 3 {
		t.Fatalf("%d ledgers after segment.bytes=250", n)
	}
}

// Retention racing produce and fetch: a fetch either serves whole, valid
// batches at or after its offset or says OFFSET_OUT_OF_RANGE (the start
// moved); nothing at or after the final log start is lost.
func TestRetentionConcurrent(t *testing.T) {
	c := fixedClock(10_000)
	g := retentionGateway(t, c)
	g.create("t", 1, map[string]string{"segment.bytes": "300", "retention.bytes": "600", "retention.ms": "-1"})
	const n = 200
	done := make(chan struct{})
	errs := make(chan error, 3)
	go func() { // producer
		defer close(done)
		for i := 0; i < n; i++ {
			if _, err := g.r.Produce("t", 0, plain(1, int64(i)).encode()); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	go func() { // retention
		for {
			select {
			case <-done:
				errs <- nil
				return
			default:
			}
			if err := g.r.Passes().RunRetention(c.now()); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() { // reader from the log start
		for {
			select {
			case <-done:
				errs <- nil
				return
			default:
			}
			start, _, _, err := g.r.Bounds("t", 0)
			if err != nil {
				errs <- err
				return
			}
			res, err := g.r.Fetch("t", 0, start, 1<<20, true, ReadUncommitted)
			if err != nil && !errors.Is(err, ErrOffsetOutOfRange) {
				errs <- err
				return
			}
			for _, b := range res.Batches {
				if baseOffsetOf(b) < start {
					errs <- errors.New("served a batch below the log start")
					return
				}
			}
		}
	}()
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := g.r.Passes().RunRetention(c.now()); err != nil {
		t.Fatal(err)
	}
	info := logInfo(t, g, "t")
	if info.Start == 0 || info.End != n {
		t.Fatalf("after the race: %+v", info)
	}
	for off := info.Start; off < info.End; off++ {
		if res := g.fetch("t", 0, off, 1); len(res.Batches) != 1 || baseOffsetOf(res.Batches[0]) != off {
			t.Fatalf("offset %d lost", off)
		}
	}
}
