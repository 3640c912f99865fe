package resolver

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage"
)

// kafkaDedupWindow is Apache Kafka's number of batches per producer whose
// retries a broker recognizes (ProducerStateEntry's
// NUM_BATCHES_TO_RETAIN, the max.in.flight.requests.per.connection limit
// of an idempotent producer). Hard-coded on purpose: the tests below pin
// the gateway to Kafka's number, not to its own constant.
const kafkaDedupWindow = 5

// TestIdempotenceWindowIsKafkas: after 6 batches of one producer, a retry
// of each of the last 5 returns its original offset and writes nothing; a
// retry of the 6th from the end is refused with OUT_OF_ORDER_SEQUENCE_NUMBER,
// as Kafka does for a batch that is neither in its cache nor the next in
// sequence (it no longer answers DUPLICATE_SEQUENCE_NUMBER). The same holds
// after a crash, when the state is rebuilt from the log.
func TestIdempotenceWindowIsKafkas(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	const batches = kafkaDedupWindow + 1
	var offs []Offset
	for i := range batches {
		res := g.produce("t", 0, idem(3, 0, int32(2*i), 2).encode())
		offs = append(offs, res.BaseOffset)
	}
	_, hwm, _, _ := g.r.Bounds("t", 0)
	check := func(phase string) {
		t.Helper()
		for i := batches - kafkaDedupWindow; i < batches; i++ {
			res, err := g.r.Produce("t", 0, idem(3, 0, int32(2*i), 2).encode())
			if err != nil || !res.Duplicate || res.BaseOffset != offs[i] {
				t.Fatalf("%s: retry of batch %d (%d from the end): %+v %v, want duplicate at %d",
					phase, i, batches-i, res, err, offs[i])
			}
		}
		_, err := g.r.Produce("t", 0, idem(3, 0, 0, 2).encode())
		if !errors.Is(err, ErrOutOfOrderSequence) {
			t.Fatalf("%s: retry of the batch %d from the end: %v, want %v", phase, batches, err, ErrOutOfOrderSequence)
		}
		if _, now, _, _ := g.r.Bounds("t", 0); now != hwm {
			t.Fatalf("%s: high watermark %d -> %d: a retry was written", phase, hwm, now)
		}
	}
	check("live")
	g.crashReopen()
	check("after crash")
}

// syncGateFS holds every segment-file Sync while closed, so a test can
// keep a produce pending (written, not yet durable) as long as it likes.
type syncGateFS struct {
	storage.FS
	mu      sync.Mutex
	gate    chan struct{} // nil: syncs pass
	entered chan struct{} // receives one value per sync that waits
}

func (f *syncGateFS) hold() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gate = make(chan struct{})
}

// release lets held and later syncs pass; a no-op when not holding.
func (f *syncGateFS) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gate != nil {
		close(f.gate)
		f.gate = nil
	}
}

func (f *syncGateFS) OpenFile(name string, flag int, perm uint32) (storage.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return gatedFile{File: file, fs: f}, nil
}

type gatedFile struct {
	storage.File
	fs *syncGateFS
}

func (g gatedFile) Sync() error {
	g.fs.mu.Lock()
	gate := g.fs.gate
	g.fs.mu.Unlock()
	if gate != nil {
		select {
		case g.fs.entered <- struct{}{}:
		default:
		}
		<-gate
	}
	return g.File.Sync()
}

// TestIdempotentRetryWhileOriginalPending: a retry that arrives while its
// original is written but not yet durable (its fdatasync held) is not
// answered before the original is durable, then gets the original's
// offset; the batch is stored once.
func TestIdempotentRetryWhileOriginalPending(t *testing.T) {
	fs := &syncGateFS{FS: storage.OSFS(), entered: make(chan struct{}, 1)}
	g := &gateway{t: t, dir: t.TempDir(), opts: storage.Options{FS: fs}}
	g.open()
	t.Cleanup(g.close)
	t.Cleanup(fs.release) // runs first: a failed test must not hang in Close
	g.create("t", 1, nil)
	g.produce("t", 0, idem(4, 0, 0, 3).encode()) // offsets 0-2

	fs.hold()
	b := idem(4, 0, 3, 2).encode()
	orig, err := g.r.ProduceAsync("t", 0, b)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-fs.entered: // the original is written, its sync held
	case <-time.After(30 * time.Second):
		t.Fatal("the original's sync never started")
	}
	type answer struct {
		res ProduceResult
		err error
	}
	retried := make(chan answer, 1)
	go func() {
		res, err := g.r.Produce("t", 0, b)
		retried <- answer{res, err}
	}()
	// While the sync is held, the retry must not be answered. (A bounded
	// look for a wrong early answer; the pass condition below waits.)
	select {
	case a := <-retried:
		t.Fatalf("retry answered before the original was durable: %+v %v", a.res, a.err)
	case <-time.After(200 * time.Millisecond):
	}
	if _, hwm, _, _ := g.r.Bounds("t", 0); hwm != 3 {
		t.Fatalf("high watermark %d while the sync is held, want 3", hwm)
	}
	fs.release()
	res, err := orig.Wait()
	if err != nil || res.BaseOffset != 3 || res.Duplicate {
		t.Fatalf("original: %+v %v", res, err)
	}
	var a answer
	select {
	case a = <-retried:
	case <-time.After(30 * time.Second):
		t.Fatal("retry never answered")
	}
	if a.err != nil || !a.res.Duplicate || a.res.BaseOffset != 3 {
		t.Fatalf("retry: %+v %v, want duplicate at 3", a.res, a.err)
	}
	if _, hwm, _, _ := g.r.Bounds("t", 0); hwm != 5 {
		t.Fatalf("high watermark %d, want 5: the retry was written", hwm)
	}
	if got := g.fetch("t", 0, 0, 1<<20); len(got.Batches) != 2 {
		t.Fatalf("%d batches stored, want 2", len(got.Batches))
	}
}
