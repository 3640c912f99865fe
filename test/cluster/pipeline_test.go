package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Pipeline is a transactional consume-transform-produce pipeline (KIP-98,
// KIP-447): members of one consumer group, each a franz-go
// GroupTransactSession reading In at read_committed and writing, for each
// record, "out-"+value to Out, keyed by the value, with the consumed
// offsets committed in the same transaction. Exactly once: whatever the
// faults, Out's committed records are each of In's records once.
type Pipeline struct {
	c       *Cluster
	In, Out string
	group   string
	timeout time.Duration // transaction.timeout.ms
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu       sync.Mutex
	commits  int
	aborts   int
	restarts int
	lastErr  error
	ended    time.Duration // in End, over all transactions
	maxEnd   time.Duration
	failures map[string]int // produce errors, by message
	errs     []error        // every error a member saw, in order
}

// StartPipeline starts n members of group piping in to out, with a
// transaction timeout of 10 s: a member killed mid-transaction holds the
// last stable offset back no longer.
func (c *Cluster) StartPipeline(in, out, group string, n int) *Pipeline {
	return c.StartPipelineTimeout(in, out, group, n, 10*time.Second)
}

// StartPipelineTimeout is StartPipeline with the members' transaction
// timeout.
func (c *Cluster) StartPipelineTimeout(in, out, group string, n int, timeout time.Duration) *Pipeline {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pipeline{c: c, In: in, Out: out, group: group, timeout: timeout, cancel: cancel}
	for i := range n {
		p.wg.Add(1)
		go p.member(ctx, fmt.Sprintf("%s-%d", group, i))
	}
	c.t.Cleanup(p.Stop)
	return p
}

// session is one incarnation of a member: a failed transactional client
// cannot go on (kgo's End: no error is retriable), so the member starts a
// new one under the same transactional id, which fences the old one.
func (p *Pipeline) session(txnID string) (*kgo.GroupTransactSession, error) {
	opts := append([]kgo.Opt{kgo.SeedBrokers(p.c.Addrs()...)}, fastMetadata()...)
	opts = append(opts,
		kgo.TransactionalID(txnID),
		kgo.TransactionTimeout(p.timeout),
		kgo.ConsumerGroup(p.group),
		kgo.ConsumeTopics(p.In),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.SessionTimeout(6*time.Second),
		kgo.HeartbeatInterval(500*time.Millisecond),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.ProduceRequestTimeout(5*time.Second),
		kgo.RequestTimeoutOverhead(3*time.Second),
		kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.GzipCompression()), // compressed, as clients do; the check reads gzip
	)
	return kgo.NewGroupTransactSession(opts...)
}

func (p *Pipeline) member(ctx context.Context, txnID string) {
	defer p.wg.Done()
	for ctx.Err() == nil {
		s, err := p.session(txnID)
		if err != nil {
			p.note(false, err)
			continue
		}
		err = p.pump(ctx, s)
		s.Close()
		if ctx.Err() == nil {
			p.note(false, err)
			p.mu.Lock()
			p.restarts++
			p.mu.Unlock()
		}
	}
}

// pump runs transactions on s until one fails or ctx ends.
func (p *Pipeline) pump(ctx context.Context, s *kgo.GroupTransactSession) error {
	for ctx.Err() == nil {
		fs := s.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if fs.Empty() {
			continue
		}
		if err := s.Begin(); err != nil {
			return err
		}
		var failed atomic.Bool
		fs.EachRecord(func(r *kgo.Record) {
			out := &kgo.Record{Topic: p.Out, Key: r.Value, Value: append([]byte("out-"), r.Value...)}
			s.Produce(ctx, out, func(_ *kgo.Record, err error) {
				if err != nil {
					failed.Store(true)
					p.produceFailed(err)
				}
			})
		})
		// A record that failed must not be committed past: flush, then
		// commit only if every record made it (kgo fails a record
		// without failing the transaction for some errors).
		if err := s.Client().Flush(ctx); err != nil {
			return nil
		}
		start := time.Now()
		committed, err := s.End(ctx, kgo.TransactionEndTry(!failed.Load()))
		p.timed(time.Since(start))
		p.note(committed, err)
		if err != nil {
			return err
		}
	}
	return nil
}

func (p *Pipeline) note(committed bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if committed {
		p.commits++
	} else {
		p.aborts++
	}
	if err != nil {
		p.lastErr = err
		p.errs = append(p.errs, err)
	}
}

// Errors is every error the members saw (session, transaction).
func (p *Pipeline) Errors() []error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]error(nil), p.errs...)
}

func (p *Pipeline) produceFailed(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failures == nil {
		p.failures = map[string]int{}
	}
	p.failures[err.Error()]++
	p.errs = append(p.errs, err)
}

func (p *Pipeline) timed(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ended += d
	p.maxEnd = max(p.maxEnd, d)
}

// Stop stops the members (once), aborting what they have in flight.
func (p *Pipeline) Stop() {
	if p.cancel == nil {
		return
	}
	p.cancel()
	p.cancel = nil
	p.wg.Wait()
}

// Stats are the transactions committed and aborted, the sessions
// restarted after a failure, and the last error.
func (p *Pipeline) Stats() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	mean := time.Duration(0)
	if n := p.commits + p.aborts; n > 0 {
		mean = p.ended / time.Duration(n)
	}
	return fmt.Sprintf("%d committed, %d aborted, %d restarts, End mean %v max %v, last error %v, produce errors %v",
		p.commits, p.aborts, p.restarts, mean.Round(time.Millisecond), p.maxEnd.Round(time.Millisecond), p.lastErr, p.failures)
}

// CheckExactlyOnce reads Out at read_committed to its end (a sentinel
// written to each of its partitions after the pipeline stopped) and
// requires exactly one "out-"+v for every value v of in (every record of
// the input topic, as read from its leaders).
func (p *Pipeline) CheckExactlyOnce(t testing.TB, in map[int32][]Rec, outParts int32) {
	t.Helper()
	const sentinel = "sentinel"
	prod := p.c.NewClient(kgo.DefaultProduceTopic(p.Out), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for q := range outParts {
		if err := prod.ProduceSync(ctx, &kgo.Record{Partition: q, Value: []byte(sentinel)}).FirstErr(); err != nil {
			t.Fatalf("sentinel to %s/%d: %v", p.Out, q, err)
		}
	}
	cons := p.c.NewClient(kgo.ConsumeTopics(p.Out), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	got := map[string]int{}
	for sentinels := int32(0); sentinels < outParts; {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d sentinels of %s at read_committed: %v", sentinels, outParts, p.Out, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) == sentinel {
				sentinels++
				return
			}
			got[string(r.Value)]++
		})
	}
	var problems []string
	add := func(s string) {
		if len(problems) < 20 {
			problems = append(problems, s)
		}
	}
	want := map[string]bool{}
	for _, recs := range in {
		for _, r := range recs {
			want["out-"+r.Value] = true
		}
	}
	for v := range want {
		if got[v] == 0 {
			add(fmt.Sprintf("%s is missing", v))
		}
	}
	dups := 0
	for v, n := range got {
		switch {
		case !want[v]:
			add(fmt.Sprintf("%s was never in %s", v, p.In))
		case n > 1:
			dups++
			add(fmt.Sprintf("%s %d times", v, n))
		}
	}
	t.Logf("pipeline: %d input records, %d committed outputs, %d duplicated; %s", len(want), len(got), dups, p.Stats())
	if len(problems) > 0 {
		p.explainMissing(t, ctx, want, got, outParts)
		sort.Strings(problems)
		t.Errorf("the transactional pipeline is not exactly once:\n%s", strings.Join(problems, "\n"))
	}
}

// explainMissing logs where the missing outputs are at read_uncommitted,
// with the batches and markers around them: written but aborted, hidden,
// or not written at all.
func (p *Pipeline) explainMissing(t testing.TB, ctx context.Context, want map[string]bool, got map[string]int, outParts int32) {
	missing := map[string]bool{}
	for v := range want {
		if got[v] == 0 {
			missing[v] = true
		}
	}
	leaders, err := p.c.Leaders(ctx, p.Out, outParts)
	if err != nil {
		t.Logf("explain: %v", err)
		return
	}
	v, err := p.c.Metadata(ctx, int(leaders[0].Leader), p.Out)
	if err != nil {
		t.Logf("explain: %v", err)
		return
	}
	found := 0
	for q := range outParts {
		_, recs, err := p.c.readPartition(ctx, int(leaders[q].Leader), p.Out, v.ID, q, parseAll)
		if err != nil {
			t.Logf("explain: %s/%d: %v", p.Out, q, err)
			continue
		}
		lo, hi := -1, -1
		for k, r := range recs {
			if missing[r.Value] {
				found++
				if lo < 0 {
					lo = k
				}
				hi = k
			}
		}
		if lo < 0 {
			continue
		}
		var b strings.Builder
		for _, r := range recs[max(0, lo-8):min(len(recs), hi+9)] {
			mark := " "
			if missing[r.Value] {
				mark = "!"
			}
			what := r.Value
			if r.Control != "" {
				what = strings.ToUpper(r.Control)
			}
			fmt.Fprintf(&b, "\n  %s %d pid %d/%d txn %v %s", mark, r.Offset, r.PID, r.Epoch, r.Txn, what)
		}
		t.Logf("%s/%d around its missing outputs (! missing):%s", p.Out, q, b.String())
	}
	t.Logf("%d of %d missing outputs are in the log at read_uncommitted", found, len(missing))
}
