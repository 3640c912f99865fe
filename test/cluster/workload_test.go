package cluster

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Ack is where an acknowledged record is.
type Ack struct {
	Partition int32
	Offset    int64
}

// Book records every value produced: issued, then acknowledged (with its
// partition and offset) or failed. A failed value may or may not be in
// the log; an acknowledged one must be, exactly once, where it was
// acknowledged.
type Book struct {
	mu        sync.Mutex
	issued    map[string]bool
	acked     map[string]Ack
	failed    map[string]error
	forbidden map[string]string // values that must never be in the log, and why
	lats      []latency         // each acknowledgement's latency, in order
}

// latency is one acknowledged record's: from its Produce call (kgo sets
// its timestamp then) to its acknowledgement at at.
type latency struct {
	at time.Time
	d  time.Duration
}

func newBook() *Book {
	return &Book{issued: map[string]bool{}, acked: map[string]Ack{}, failed: map[string]error{}, forbidden: map[string]string{}}
}

func (b *Book) issue(v string) {
	b.mu.Lock()
	b.issued[v] = true
	b.mu.Unlock()
}

func (b *Book) done(r *kgo.Record, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		b.failed[string(r.Value)] = err
		return
	}
	b.acked[string(r.Value)] = Ack{Partition: r.Partition, Offset: r.Offset}
	now := time.Now()
	b.lats = append(b.lats, latency{at: now, d: now.Sub(r.Timestamp)})
}

// Latencies are the produce latencies of the records acknowledged in
// [from, to], sorted.
func (b *Book) Latencies(from, to time.Time) []time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []time.Duration
	for _, l := range b.lats {
		if !l.at.Before(from) && !l.at.After(to) {
			out = append(out, l.d)
		}
	}
	slices.Sort(out)
	return out
}

// quantile is the q-quantile of sorted ds (0 for none).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

// ack records v as issued and acknowledged at partition p, offset off
// (and no longer forbidden).
func (b *Book) ack(v string, p int32, off int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.issued[v] = true
	b.acked[v] = Ack{Partition: p, Offset: off}
	delete(b.forbidden, v)
}

// Forbid records a value that was sent but must never be published.
func (b *Book) Forbid(v, why string) {
	b.mu.Lock()
	b.forbidden[v] = why
	b.mu.Unlock()
}

// Acked is the number of acknowledged values.
func (b *Book) Acked() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.acked)
}

// Failed is the failed values with their errors.
func (b *Book) Failed() map[string]error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps(b.failed)
}

func maps[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// WaitAcked waits until at least n values are acknowledged: the cluster
// takes writes.
func (b *Book) WaitAcked(t testing.TB, n int, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, fmt.Sprintf("%d acknowledged records", n), func(context.Context) (bool, error) {
		if got := b.Acked(); got < n {
			return false, fmt.Errorf("%d acknowledged", got)
		}
		return true, nil
	})
}

// Producers are idempotent producers (acks=all, kgo's default), each a
// goroutine producing unique keyed values at a steady pace.
type Producers struct {
	Book *Book
	cls  []*kgo.Client
	stop chan struct{}
	wg   sync.WaitGroup
}

// StartProducers starts n producers of topic, recording into book (nil:
// a new one). Each has at most 32 records in flight and issues one every
// interval.
func (c *Cluster) StartProducers(topic string, n int, tag string, interval time.Duration, book *Book, opts ...kgo.Opt) *Producers {
	c.t.Helper()
	if book == nil {
		book = newBook()
	}
	p := &Producers{Book: book, stop: make(chan struct{})}
	for g := range n {
		cl := c.NewClient(append([]kgo.Opt{
			kgo.DefaultProduceTopic(topic),
			kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.ProducerBatchCompression(kgo.NoCompression()),
			kgo.ProducerLinger(0),
			// A request to a frozen node gives up after seconds, not
			// kgo's default 20, and is retried where the partition went.
			kgo.ProduceRequestTimeout(5 * time.Second),
			kgo.RequestTimeoutOverhead(3 * time.Second),
		}, opts...)...)
		p.cls = append(p.cls, cl)
		p.wg.Add(1)
		go p.run(cl, fmt.Sprintf("%s-%d", tag, g), interval)
	}
	return p
}

func (p *Producers) run(cl *kgo.Client, tag string, interval time.Duration) {
	defer p.wg.Done()
	sem := make(chan struct{}, 32)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for seq := 0; ; seq++ {
		select {
		case <-p.stop:
			return
		case sem <- struct{}{}:
		}
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		v := fmt.Sprintf("%s-%d", tag, seq)
		p.Book.issue(v)
		cl.Produce(context.Background(), &kgo.Record{Key: []byte(v), Value: []byte(v)}, func(r *kgo.Record, err error) {
			p.Book.done(r, err)
			<-sem
		})
	}
}

// Stop stops issuing and waits until every issued record is acknowledged
// or failed.
func (p *Producers) Stop(t testing.TB) {
	t.Helper()
	close(p.stop)
	p.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, cl := range p.cls {
		if err := cl.Flush(ctx); err != nil {
			t.Fatalf("producers did not finish: %v", err)
		}
	}
}

// Group is consumers of one classic consumer group, committing (kgo's
// autocommit), recording every value they consume.
type Group struct {
	Name   string
	cls    []*kgo.Client
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	consumed map[string]int
}

// StartGroup starts n members of group consuming topic from the start.
func (c *Cluster) StartGroup(topic, group string, n int) *Group {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g := &Group{Name: group, cancel: cancel, consumed: map[string]int{}}
	for range n {
		cl := c.NewClient(
			kgo.ConsumerGroup(group),
			kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.AutoCommitInterval(300*time.Millisecond),
			kgo.SessionTimeout(6*time.Second),
			kgo.HeartbeatInterval(500*time.Millisecond),
			kgo.FetchMaxWait(500*time.Millisecond),
		)
		g.cls = append(g.cls, cl)
		g.wg.Add(1)
		go g.run(ctx, cl)
	}
	c.t.Cleanup(g.Stop)
	return g
}

func (g *Group) run(ctx context.Context, cl *kgo.Client) {
	defer g.wg.Done()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		g.mu.Lock()
		fs.EachRecord(func(r *kgo.Record) { g.consumed[string(r.Value)]++ })
		g.mu.Unlock()
	}
}

// Stop stops the members (once).
func (g *Group) Stop() {
	if g.cancel == nil {
		return
	}
	g.cancel()
	g.cancel = nil
	g.wg.Wait()
	// Leave the group, but not for long if the cluster is broken (a
	// failed test); the clients are closed at the test's cleanup.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, cl := range g.cls {
		cl.LeaveGroupContext(ctx)
	}
}

// Consumed is how often each value was consumed.
func (g *Group) Consumed() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps(g.consumed)
}

// CommitSampler reads a group's committed offsets every few hundred
// milliseconds and records any that went backwards.
type CommitSampler struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	last     map[int32]int64
	samples  int
	backward []string
}

// SampleCommits starts sampling group's committed offsets of topic.
func (c *Cluster) SampleCommits(topic, group string) *CommitSampler {
	c.t.Helper()
	adm := c.Admin()
	ctx, cancel := context.WithCancel(context.Background())
	s := &CommitSampler{cancel: cancel, done: make(chan struct{}), last: map[int32]int64{}}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			s.sample(ctx, adm, topic, group)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	c.t.Cleanup(s.Stop)
	return s
}

func (s *CommitSampler) sample(ctx context.Context, adm *kadm.Client, topic, group string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return // the coordinator moving: try again
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	seen := map[int32]bool{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Topic != topic || o.Err != nil {
			return
		}
		seen[o.Partition] = true
		if prev, ok := s.last[o.Partition]; ok && o.At < prev {
			s.backward = append(s.backward, fmt.Sprintf("%s partition %d: committed %d after %d (%s)",
				time.Now().UTC().Format("15:04:05.000"), o.Partition, o.At, prev, group))
		}
		s.last[o.Partition] = o.At
	})
	for p, prev := range s.last {
		if !seen[p] && prev >= 0 {
			s.backward = append(s.backward, fmt.Sprintf("%s partition %d: no committed offset after %d (%s)",
				time.Now().UTC().Format("15:04:05.000"), p, prev, group))
			s.last[p] = -1
		}
	}
}

// Stop stops sampling (once).
func (s *CommitSampler) Stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	<-s.done
}

// Backward is every regression seen, and the number of samples taken.
func (s *CommitSampler) Backward() ([]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.backward), s.samples
}

// WaitCommitted waits until group's committed offset of every partition
// of topic is its end (want[p]).
func (c *Cluster) WaitCommitted(group, topic string, want []int64, timeout time.Duration) {
	c.t.Helper()
	adm := c.Admin()
	waitFor(c.t, timeout, "the group to commit every partition's end", func(ctx context.Context) (bool, error) {
		resp, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return false, err
		}
		for p, end := range want {
			o, ok := resp.Lookup(topic, int32(p))
			if !ok || o.Err != nil || o.At != end {
				return false, fmt.Errorf("partition %d: committed %d (%v), end %d", p, o.At, o.Err, end)
			}
		}
		return true, nil
	})
}

// Coordinator is the node that coordinates group, as node i answers.
func (c *Cluster) Coordinator(ctx context.Context, i int, group string) (int, error) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey = group
	req.CoordinatorKeys = []string{group}
	r, err := c.Ask(ctx, i, req)
	if err != nil {
		return -1, err
	}
	resp := r.(*kmsg.FindCoordinatorResponse)
	code, id := resp.ErrorCode, resp.NodeID
	if len(resp.Coordinators) > 0 {
		code, id = resp.Coordinators[0].ErrorCode, resp.Coordinators[0].NodeID
	}
	if err := kerr.ErrorForCode(code); err != nil {
		return -1, err
	}
	return int(id), nil
}

// CheckCommitsSurviveCoordinatorKill kills -9 the coordinator of group
// (whose members have left) and restarts it: the first answer the group's
// new coordinator gives has exactly the committed offsets want (the coordinator role).
func (c *Cluster) CheckCommitsSurviveCoordinatorKill(group, topic string, want []int64) {
	c.t.Helper()
	var coord int
	waitFor(c.t, 60*time.Second, "the group's coordinator", func(ctx context.Context) (bool, error) {
		var err error
		coord, err = c.Coordinator(ctx, c.Up()[0], group)
		return err == nil, err
	})
	c.Kill(coord)
	c.Restart(coord)
	adm := c.Admin()
	var resp kadm.OffsetResponses
	waitFor(c.t, 90*time.Second, "the group's offsets after its coordinator's kill", func(ctx context.Context) (bool, error) {
		var err error
		resp, err = adm.FetchOffsets(ctx, group)
		if err == nil {
			err = resp.Error()
		}
		return err == nil, err
	})
	for p, end := range want {
		if o, ok := resp.Lookup(topic, int32(p)); !ok || o.At != end {
			c.t.Errorf("after a kill -9 of coordinator node %d: partition %d committed %d (%v), was %d", coord, p, o.At, ok, end)
		}
	}
}

// ReadAll reads every partition of topic from the given leaders (ask
// each leader itself), retrying while leaders move.
func (c *Cluster) ReadAll(topic string, n int32) (map[int32][]Rec, []Partition) {
	c.t.Helper()
	out := map[int32][]Rec{}
	var leaders []Partition
	waitFor(c.t, 2*time.Minute, "a read of every partition from its leader", func(ctx context.Context) (bool, error) {
		l, err := c.Leaders(ctx, topic, n)
		if err != nil {
			return false, err
		}
		v, err := c.Metadata(ctx, int(l[0].Leader), topic)
		if err != nil {
			return false, err
		}
		for p := range n {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			start, recs, err := c.ReadPartition(ctx, int(l[p].Leader), topic, v.ID, p)
			cancel()
			if err != nil {
				return false, err
			}
			if start != 0 {
				return false, fmt.Errorf("partition %d starts at %d, not 0", p, start)
			}
			out[p] = recs
		}
		leaders = l
		return true, nil
	})
	return out, leaders
}

// Check compares what the partitions hold with what b recorded: offsets
// dense from 0; every value at most once; every acknowledged value where
// it was acknowledged; no value that was never issued or is forbidden.
// It reports every problem (up to a few of each kind).
func (b *Book) Check(t testing.TB, parts map[int32][]Rec) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var problems []string
	add := func(format string, args ...any) {
		if len(problems) < 30 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	where := map[string]Ack{}
	total := 0
	for p, recs := range parts {
		for k, r := range recs {
			if r.Offset != int64(k) {
				add("partition %d: record %d has offset %d (offsets not dense)", p, k, r.Offset)
				break
			}
		}
		for _, r := range recs {
			total++
			if prev, dup := where[r.Value]; dup {
				add("value %q twice: partition %d offset %d and partition %d offset %d", r.Value, prev.Partition, prev.Offset, p, r.Offset)
				continue
			}
			where[r.Value] = Ack{Partition: p, Offset: r.Offset}
			if why, bad := b.forbidden[r.Value]; bad {
				add("value %q is in partition %d at %d: it must not be (%s)", r.Value, p, r.Offset, why)
			} else if !b.issued[r.Value] {
				add("value %q in partition %d at %d was never produced", r.Value, p, r.Offset)
			}
		}
	}
	lost := 0
	for v, a := range b.acked {
		got, ok := where[v]
		switch {
		case !ok:
			lost++
			add("acknowledged value %q (partition %d offset %d) is missing", v, a.Partition, a.Offset)
		case got != a:
			add("acknowledged value %q at partition %d offset %d is at partition %d offset %d", v, a.Partition, a.Offset, got.Partition, got.Offset)
		}
	}
	t.Logf("check: %d records in the log, %d acknowledged, %d failed, %d lost", total, len(b.acked), len(b.failed), lost)
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Errorf("%d kinds of problems (first %d):\n%s", len(problems), len(problems), strings.Join(problems, "\n"))
	}
}

// CheckConsumed: the group consumed every acknowledged value.
func (b *Book) CheckConsumed(t testing.TB, consumed map[string]int) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	missing := 0
	var ex []string
	for v := range b.acked {
		if consumed[v] == 0 {
			missing++
			if len(ex) < 5 {
				ex = append(ex, v)
			}
		}
	}
	if missing > 0 {
		t.Errorf("the group never consumed %d acknowledged values, e.g. %q", missing, ex)
	}
}

// ends are each partition's end offset (its next offset).
func ends(parts map[int32][]Rec, n int32) []int64 {
	out := make([]int64, n)
	for p := range n {
		out[p] = int64(len(parts[p]))
	}
	return out
}
