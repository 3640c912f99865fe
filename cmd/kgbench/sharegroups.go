package main

// sharegroups.go is workload 11: share groups (KIP-932). Share-group
// consume throughput with --share-members (1, 4 and 16) members on one
// partition, and --share-partitions (16) members on as many partitions;
// and acknowledgement latency.
//
// The two topics are filled first with --share-records records each (the
// fill is in no row). Each row then has a share group of its own, set to
// share.auto.offset.reset=earliest (a GROUP config, as in Kafka), whose
// members start at once and consume in explicit acknowledgement mode:
// poll, accept every record polled, and commit synchronously (FlushAcks,
// which sends a ShareAcknowledge and waits for the broker's answer and
// the ack callback) before the next poll. A member fetches only while it
// polls (MaxConcurrentFetches 0), so no ShareFetch of its own is in flight
// when it commits and the commit time is the acknowledgement's round trip.
//
// MB/s and records/s: every record of the topic accepted at least once,
// from the first member's start to the commit that accepted the last of
// them. Ack latency: p50/p99 of the commits. A failed acknowledgement (an
// error in the ack callback) fails the row: its records would come back
// only after the lock duration, and the numbers would hide it.
//
// The notes add the ShareAcknowledge requests' own round trips, from the
// start of the request's write to the end of the answer's read (franz-go's
// BrokerE2E). A commit is that plus the client's time before the write
// and after the read: its goroutines waiting for a CPU while the other
// members of the process decode their fetches. The round trip still holds
// the client's reading goroutine's wait for a CPU once the answer is
// there, so it bounds the server's part from above.
//
// A server that does not advertise ShareGroupHeartbeat, ShareFetch and
// ShareAcknowledge (ApiVersions keys 76, 78, 79) at v1, the first GA
// version, gets "unsupported" rows.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	topicW11One   = "kgbench-w11-1p"
	topicW11Many  = "kgbench-w11-np"
	workloadShare = 11 // this workload's number: a row per member count
)

var (
	errShareAck        = errors.New("kgbench: share acknowledgement failed")
	errShareIncomplete = errors.New("kgbench: share group did not deliver every record")
	shareNeeds         = []apiNeed{{kmsg.ShareGroupHeartbeat, 1}, {kmsg.ShareFetch, 1}, {kmsg.ShareAcknowledge, 1}}
)

// shareCase is one row: members on a topic of partitions partitions.
type shareCase struct {
	topic      string
	partitions int
	members    int
}

func (c shareCase) short() string { return fmt.Sprintf("%dp×%d", c.partitions, c.members) }

// shareCases are the rows --share-members and --share-partitions ask for.
func (c *config) shareCases() []shareCase {
	var out []shareCase
	for _, m := range c.ShareMembers {
		out = append(out, shareCase{topicW11One, 1, m})
	}
	return append(out, shareCase{topicW11Many, c.SharePartitions, c.SharePartitions})
}

func (c *config) shareRows() []string {
	var out []string
	for _, sc := range c.shareCases() {
		out = append(out, "11 share "+sc.short())
	}
	return out
}

// shareRecorder collects one row's samples; every member adds to it.
type shareRecorder struct {
	total    int // records in the topic
	ackErrs  atomic.Int64
	firstErr atomic.Pointer[error]
	done     chan struct{} // closed once every record was accepted
	mu       struct {
		sync.Mutex
		accepted  map[recordID]bool
		delivered int // records polled, redeliveries included
		commits   []time.Duration
		wire      []time.Duration // ShareAcknowledge round trips (OnBrokerE2E)
		doneAt    time.Time
	}
}

type recordID struct {
	partition int32
	offset    int64
}

func newShareRecorder(total int) *shareRecorder {
	r := &shareRecorder{total: total, done: make(chan struct{})}
	r.mu.accepted = make(map[recordID]bool, total)
	return r
}

// onAck is the members' ShareAckCallback.
func (r *shareRecorder) onAck(_ *kgo.Client, results kgo.ShareAckResults) {
	if err := results.Error(); err != nil {
		r.ackErrs.Add(1)
		r.firstErr.CompareAndSwap(nil, &err)
	}
}

// OnBrokerE2E records a ShareAcknowledge's round trip on the wire: its
// write and the wait for and read of its answer (a franz-go hook; the
// wait to be written is the client's, left out).
func (r *shareRecorder) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if key != int16(kmsg.ShareAcknowledge) || e2e.Err() != nil {
		return
	}
	r.mu.Lock()
	r.mu.wire = append(r.mu.wire, e2e.DurationE2E())
	r.mu.Unlock()
}

// committed records a commit that took took and accepted recs.
func (r *shareRecorder) committed(recs []*kgo.Record, took time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.commits = append(r.mu.commits, took)
	r.mu.delivered += len(recs)
	was := len(r.mu.accepted)
	for _, rec := range recs {
		r.mu.accepted[recordID{rec.Partition, rec.Offset}] = true
	}
	if was < r.total && len(r.mu.accepted) >= r.total {
		r.mu.doneAt = time.Now()
		close(r.done)
	}
}

// consume is one member's loop until ctx ends; it returns the last fetch
// error (the end of ctx is none).
func (r *shareRecorder) consume(ctx context.Context, cl *kgo.Client) error {
	var last error
	for ctx.Err() == nil {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return last
		}
		fetches.EachError(func(_ string, _ int32, err error) { last = err })
		recs := fetches.Records()
		if len(recs) == 0 {
			continue
		}
		cl.MarkAcks(kgo.AckAccept)
		start := time.Now()
		if err := cl.FlushAcks(ctx); err != nil {
			return last // only the end of ctx stops a flush
		}
		r.committed(recs, time.Since(start))
	}
	return last
}

// shareGroups is workload 11 (see the top of this file). A row's failure
// goes into it and the next row runs.
func (b *bench) shareGroups(ctx context.Context, rows []Result) error {
	if err := b.serverSupports(ctx, shareNeeds...); err != nil {
		return err
	}
	if err := b.fillShareTopics(ctx); err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	if err := b.warmShareCoordinators(ctx); err != nil {
		return err
	}
	cases := b.cfg.shareCases()
	// A row that never gets all its records costs its share of
	// --workload-timeout, not all of it: the next rows still run.
	limit := b.cfg.WorkloadTimeout / time.Duration(len(cases))
	for i, sc := range cases {
		row := &rows[i]
		group := fmt.Sprintf("kgbench-w11-%d-%s", i, sc.short())
		err := b.measure(row, func() error {
			ctx, cancel := context.WithTimeout(ctx, limit)
			defer cancel()
			return b.shareCase(ctx, sc, group, row)
		})
		if err != nil {
			row.Error = err.Error()
		}
	}
	return nil
}

// fillShareTopics creates the topics the rows read and fills each.
func (b *bench) fillShareTopics(ctx context.Context) error {
	topics := map[string]int32{}
	for _, sc := range b.cfg.shareCases() {
		topics[sc.topic] = int32(sc.partitions)
	}
	if err := b.createTopics(ctx, topics); err != nil {
		return err
	}
	cl, err := b.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	for topic := range topics {
		if err := b.produceN(ctx, cl, topic, b.cfg.ShareRecords); err != nil {
			return fmt.Errorf("%s: %w", topic, err)
		}
	}
	return nil
}

// shareCase runs one row.
func (b *bench) shareCase(ctx context.Context, sc shareCase, group string, res *Result) error {
	if err := b.setGroupConfig(ctx, group, "share.auto.offset.reset", "earliest"); err != nil {
		return err
	}
	rec := newShareRecorder(b.cfg.ShareRecords)
	reqs := new(requestCounter)
	consCtx, stop := context.WithCancel(ctx)
	defer stop()
	members := make([]*kgo.Client, 0, sc.members)
	defer func() { closeConcurrently(members) }()
	fetchErrs := make([]error, sc.members)
	var wg sync.WaitGroup
	start := time.Now()
	for m := range sc.members {
		cl, err := b.client(kgo.ShareGroup(group), kgo.ConsumeTopics(sc.topic),
			kgo.MaxConcurrentFetches(0), kgo.ShareAckCallback(rec.onAck), kgo.WithHooks(reqs, rec))
		if err != nil {
			return err
		}
		members = append(members, cl)
		wg.Go(func() { fetchErrs[m] = rec.consume(consCtx, cl) })
	}
	var waitErr error
	select {
	case <-rec.done:
	case <-ctx.Done():
		waitErr = ctx.Err()
	}
	stop()
	wg.Wait()
	if err := b.fillShareRow(res, sc, rec, start, errors.Join(append([]error{waitErr}, fetchErrs...)...)); err != nil {
		return err
	}
	res.Notes += fmt.Sprintf(", %d ShareFetch and %d ShareAcknowledge requests", reqs.count(kmsg.ShareFetch), reqs.count(kmsg.ShareAcknowledge))
	res.Notes += rec.wireNote()
	return nil
}

// wireNote is the notes' ShareAcknowledge round trips on the wire
// (OnBrokerE2E), p50 and p99.
func (r *shareRecorder) wireNote() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := percentiles("", r.mu.wire, 0.5, 0.99)
	if len(w) != 2 {
		return ""
	}
	return fmt.Sprintf("; ShareAcknowledge write to answer p50 %.2f, p99 %.2f ms", w[0].Ms, w[1].Ms)
}

// fillShareRow fills the row, or fails it when an acknowledgement failed
// or not every record was accepted (with the members' fetch errors).
func (b *bench) fillShareRow(res *Result, sc shareCase, rec *shareRecorder, start time.Time, fetchErr error) error {
	if n := rec.ackErrs.Load(); n > 0 {
		return fmt.Errorf("%w: %d commits, the first: %v", errShareAck, n, *rec.firstErr.Load())
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := len(rec.mu.accepted); got < rec.total {
		return errors.Join(fmt.Errorf("%w: %d of %d records accepted", errShareIncomplete, got, rec.total), fetchErr)
	}
	b.setThroughput(res, rec.total, rec.mu.doneAt.Sub(start))
	res.Latency = percentiles(fmt.Sprintf("share %s ack", sc.short()), rec.mu.commits, 0.5, 0.99)
	res.Notes = fmt.Sprintf("%s on %s, %d records; explicit accept and a synchronous commit per poll: %d commits, %d deliveries",
		plural(sc.members, "member"), plural(sc.partitions, "partition"), rec.total, len(rec.mu.commits), rec.mu.delivered)
	return nil
}

// setGroupConfig sets one config of a group (a GROUP resource, as Kafka's
// kafka-configs.sh --entity-type groups does).
func (b *bench) setGroupConfig(ctx context.Context, group, name, value string) error {
	cl, err := b.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op, c.Value = name, kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(value)
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("set %s of group %s: %w", name, group, err)
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return fmt.Errorf("set %s of group %s: %w", name, group, err)
		}
	}
	return nil
}

// closeConcurrently closes every client at once.
func closeConcurrently(cls []*kgo.Client) {
	var wg sync.WaitGroup
	for _, cl := range cls {
		wg.Go(cl.Close)
	}
	wg.Wait()
}

// plural is e.g. "1 member", "4 members".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// warmShareCoordinators readies the group coordinator and the share-state
// coordinator (warmup.go) before the first row's clock starts. Only
// Apache Kafka has a share-state coordinator (its __share_group_state
// topic, which brokers, not clients, look up): kgateway and kfake keep
// share state inside the group coordinator, and kgateway answers a share
// key COORDINATOR_NOT_AVAILABLE for good, as Kafka does without the
// topic, so asking them would only wait out the warm-up's bound.
func (b *bench) warmShareCoordinators(ctx context.Context) error {
	if err := b.warmCoordinator(ctx, coordinatorGroup, "kgbench-w11-warmup"); err != nil {
		return err
	}
	if !hasShareStateTopic(b.sys.name) {
		return nil
	}
	cl, err := b.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(ctx, topicW11One)
	if err != nil {
		return err
	}
	id := md.Topics[topicW11One].ID
	return b.warmCoordinator(ctx, coordinatorShare, shareCoordinatorKey("kgbench-w11-warmup", id, 0))
}

// hasShareStateTopic reports whether system keeps share-group state in a
// share-state topic with a coordinator of its own (Apache Kafka's
// __share_group_state).
func hasShareStateTopic(system string) bool {
	return slices.Contains(kafkaSystems, system)
}
