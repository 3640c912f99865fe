package resolver

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage"
)

// gateway is a resolver over a real store in a temp dir.
type gateway struct {
	t     testing.TB
	dir   string
	cfg   Config
	opts  storage.Options
	store *storage.Store
	r     *Resolver
}

func newGateway(t testing.TB, cfg Config) *gateway {
	t.Helper()
	return newGatewayOpts(t, cfg, storage.Options{})
}

// newGatewayOpts is newGateway with the store opened with opts.
func newGatewayOpts(t testing.TB, cfg Config, opts storage.Options) *gateway {
	t.Helper()
	g := &gateway{t: t, dir: t.TempDir(), cfg: cfg, opts: opts}
	g.open()
	t.Cleanup(g.close)
	return g
}

func (g *gateway) open() {
	g.t.Helper()
	st, err := storage.Open(g.dir, g.opts)
	if err != nil {
		g.t.Fatalf("storage.Open: %v", err)
	}
	r, err := Open(st, g.cfg)
	if err != nil {
		st.Close()
		g.t.Fatalf("resolver.Open: %v", err)
	}
	g.store, g.r = st, r
}

func (g *gateway) close() {
	if g.r != nil {
		g.r.Close()
		g.r = nil
	}
	if g.store != nil {
		g.store.Close()
		g.store = nil
	}
}

// reopen closes cleanly and opens again.
func (g *gateway) reopen() {
	g.t.Helper()
	g.close()
	g.open()
}

// crashReopen drops the resolver without Close (no final checkpoint), then
// closes the store and reopens: what the resolver's durable state looks
// like after a process crash, all acknowledged data being durable.
func (g *gateway) crashReopen() {
	g.t.Helper()
	g.r = nil
	g.store.Close()
	g.store = nil
	g.open()
}

func (g *gateway) create(name string, partitions int32, configs map[string]string) Topic {
	g.t.Helper()
	tp, err := g.r.CreateTopic(name, partitions, 1, configs, false)
	if err != nil {
		g.t.Fatalf("CreateTopic %s: %v", name, err)
	}
	return tp
}

func (g *gateway) produce(topic string, part int32, b []byte) ProduceResult {
	g.t.Helper()
	res, err := g.r.Produce(topic, part, b)
	if err != nil {
		g.t.Fatalf("Produce %s/%d: %v", topic, part, err)
	}
	return res
}

func (g *gateway) fetch(topic string, part int32, off Offset, maxBytes int) FetchResult {
	g.t.Helper()
	res, err := g.r.Fetch(topic, part, off, maxBytes, true, ReadUncommitted)
	if err != nil {
		g.t.Fatalf("Fetch %s/%d@%d: %v", topic, part, off, err)
	}
	return res
}

// testBatch describes a v2 record batch to encode.
type testBatch struct {
	records  int
	baseTS   int64 // record i has timestamp baseTS+i
	value    []byte
	pid      int64 // -1: not idempotent
	epoch    int16
	seq      int32
	codec    int16
	txn      bool // the transactional attribute bit
	magic    int8 // 0 means 2
	tsDeltas []int64
}

func plain(records int, ts int64) testBatch {
	return testBatch{records: records, baseTS: ts, value: []byte("v"), pid: -1, epoch: -1, seq: -1}
}

func idem(pid int64, epoch int16, seq int32, records int) testBatch {
	return testBatch{records: records, baseTS: 1000, value: []byte("idem"), pid: pid, epoch: epoch, seq: seq}
}

// encode hand-encodes the batch (no kmsg, see TestLayering) with a valid
// CRC32C over attributes..end.
func (tb testBatch) encode() []byte {
	var recs []byte
	maxTS := tb.baseTS
	for i := 0; i < tb.records; i++ {
		d := int64(i)
		if tb.tsDeltas != nil {
			d = tb.tsDeltas[i]
		}
		maxTS = max(maxTS, tb.baseTS+d)
		var body []byte
		body = append(body, 0)                     // record attributes
		body = binary.AppendVarint(body, d)        // timestamp delta
		body = binary.AppendVarint(body, int64(i)) // offset delta
		body = binary.AppendVarint(body, -1)       // null key
		body = binary.AppendVarint(body, int64(len(tb.value)))
		body = append(body, tb.value...)
		body = binary.AppendVarint(body, 0) // no headers
		recs = binary.AppendVarint(recs, int64(len(body)))
		recs = append(recs, body...)
	}
	magic := tb.magic
	if magic == 0 {
		magic = 2
	}
	be := binary.BigEndian
	b := make([]byte, batchHeaderLen, batchHeaderLen+len(recs))
	be.PutUint64(b[0:], 0)
	be.PutUint32(b[8:], uint32(batchHeaderLen-12+len(recs)))
	be.PutUint32(b[12:], 0xffffffff)
	b[16] = byte(magic)
	attrs := uint16(tb.codec)
	if tb.txn {
		attrs |= 0x10
	}
	be.PutUint16(b[21:], attrs)
	be.PutUint32(b[23:], uint32(tb.records-1))
	be.PutUint64(b[27:], uint64(tb.baseTS))
	be.PutUint64(b[35:], uint64(maxTS))
	be.PutUint64(b[43:], uint64(tb.pid))
	be.PutUint16(b[51:], uint16(tb.epoch))
	be.PutUint32(b[53:], uint32(tb.seq))
	be.PutUint32(b[57:], uint32(tb.records))
	b = append(b, recs...)
	be.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func baseOffsetOf(b []byte) Offset { return Offset(binary.BigEndian.Uint64(b)) }

// waitSignal waits for a receive on ch (a value or its close) with a
// deadline (never a sleep).
func waitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func isErr(err, target error) bool {
	if target == nil {
		return err == nil
	}
	return errors.Is(err, target)
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// clock is a settable test clock (unix ms).
type clock struct {
	mu sync.Mutex
	ms int64
}

func fixedClock(ms int64) *clock { return &clock{ms: ms} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.UnixMilli(c.ms)
}

// millis is the clock's time in unix ms.
func (c *clock) millis() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ms
}

// advance moves the clock on by d ms.
func (c *clock) advance(d int64) {
	c.mu.Lock()
	c.ms += d
	c.mu.Unlock()
}

func (c *clock) set(ms int64) {
	c.mu.Lock()
	c.ms = ms
	c.mu.Unlock()
}

func ledgerNow(c *clock) ledger.Config { return ledger.Config{Now: c.now} }

// corruptFile flips one byte of a segment file at pos.
func corruptFile(t *testing.T, dir, name string, pos int64) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "segments", name), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, pos); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, pos); err != nil {
		t.Fatal(err)
	}
}

// The producer-id counter's keys (package producerid), spelled out here:
// the tests read and write them as a data directory has them, so a
// change of the on-disk format fails them.
var (
	keyNextPID  = []byte("resolver/next-pid")
	prefixEpoch = []byte("resolver/producer-epoch/")
)

func putProducerEpoch(id int64, epoch int16) storage.MetaOp {
	return storage.MetaOp{Key: idKey(prefixEpoch, uint64(id)), Value: binary.BigEndian.AppendUint16(nil, uint16(epoch))}
}
