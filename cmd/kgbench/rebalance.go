package main

// rebalance.go is workload 10: rebalance time. For each group protocol
// (classic eager with the range balancer, classic cooperative-sticky, and
// KIP-848 with the server's uniform assignor) and each of
// --rebalance-members (10 and 100), that many members join one new group
// on a --rebalance-partitions (100) partition topic at once; the figure is
// the time from the first member's start until the group is balanced:
// every partition owned by exactly one member, every member started and
// told its assignment, each owning its fair share (⌊P/N⌋ or ⌈P/N⌉
// partitions). Ownership is what each member's OnPartitionsAssigned /
// Revoked / Lost callbacks say. The balance must then hold, callbacks
// quiet, for rebalanceQuiet, or the wait goes on (the quiet time is not
// counted). Then one more member joins the stable group: "+1" is the time
// from its start until the group of N+1 is balanced the same way.
//
// Each protocol has a row; its figures are single samples in ms named
// "<protocol> join N" and "<protocol> +1 to N". The topic is empty, so
// only the group protocol is measured, not fetching.
//
// Settings, the same for every system: classic members heartbeat every
// --group-heartbeat (250 ms) with a 10 s session timeout and a 30 s
// rebalance timeout, modest enough that 100 members in one process on two
// cores stay within their sessions; KIP-848 members heartbeat at the
// interval the server hands out (serve-kfake is started with
// --group-heartbeat as group.consumer.heartbeat.interval.ms; the row's
// notes give the interval the server actually handed out, probed with a
// member of a group of its own). Auto-commit is off: no offsets move.
//
// The KIP-848 row is "unsupported" on a server that does not advertise
// ConsumerGroupHeartbeat v1 (franz-go would silently fall back to the
// classic protocol); every case also counts the JoinGroup and
// ConsumerGroupHeartbeat requests its members sent, and a case that used
// the other protocol's requests fails.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	topicW10           = "kgbench-w10"
	workloadRebalance  = 10 // this workload's number: a row per protocol
	rebalanceQuiet     = 500 * time.Millisecond
	rebalanceCaseLimit = 2 * time.Minute // a hung rebalance fails its row, not the run
	classicSession     = 10 * time.Second
	classicRebalance   = 30 * time.Second
)

var errRebalanceProtocol = errors.New("kgbench: members used the other group protocol")

// groupProtocol is one of workload 10's rows.
type groupProtocol struct {
	short    string // figure-name prefix
	row      string // row name
	balancer func() kgo.GroupBalancer
	kip848   bool
}

var groupProtocols = []groupProtocol{
	{"eager", "10 rebalance eager", kgo.RangeBalancer, false},
	{"coop", "10 rebalance cooperative-sticky", kgo.CooperativeStickyBalancer, false},
	// franz-go asks the server for its "uniform" assignor when the
	// balancer is a sticky one.
	{"848", "10 rebalance KIP-848", kgo.CooperativeStickyBalancer, true},
}

func rebalanceRows() []string {
	var out []string
	for _, p := range groupProtocols {
		out = append(out, p.row)
	}
	return out
}

// ownership is what each member of one group owns, as its callbacks say.
type ownership struct {
	mu      sync.Mutex
	owned   []map[int32]bool // per member
	told    []bool           // the member has had an assignment callback
	version uint64           // bumped on every change
	last    time.Time        // time of the last change
	changed chan struct{}    // signalled (non-blocking) on every change
	// requests, if set, counts the group requests sent so far;
	// requestsAtLast is its count at the last change.
	requests       func() int64
	requestsAtLast int64
}

func newOwnership(members int) *ownership {
	o := &ownership{changed: make(chan struct{}, 1)}
	for range members {
		o.owned = append(o.owned, map[int32]bool{})
		o.told = append(o.told, false)
	}
	return o
}

// update applies one callback of member m: assigned adds, otherwise the
// partitions are removed.
func (o *ownership) update(m int, parts map[string][]int32, assigned bool) {
	o.mu.Lock()
	for _, ps := range parts {
		for _, p := range ps {
			if assigned {
				o.owned[m][p] = true
			} else {
				delete(o.owned[m], p)
			}
		}
	}
	if assigned {
		o.told[m] = true
	}
	o.version++
	o.last = time.Now()
	if o.requests != nil {
		o.requestsAtLast = o.requests()
	}
	o.mu.Unlock()
	select {
	case o.changed <- struct{}{}:
	default:
	}
}

// balance describes the group of its first members members over
// partitions partitions; ok is whether it is balanced (see the top of the
// file).
func (o *ownership) balance(members, partitions int) (ok bool, state string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.balanceLocked(members, partitions)
}

func (o *ownership) balanceLocked(members, partitions int) (ok bool, state string) {
	lo, hi := partitions/members, (partitions+members-1)/members
	union := map[int32]bool{}
	told, fair, sum := 0, 0, 0
	for m := range members {
		n := len(o.owned[m])
		sum += n
		if o.told[m] {
			told++
		}
		if n >= lo && n <= hi {
			fair++
		}
		for p := range o.owned[m] {
			union[p] = true
		}
	}
	ok = told == members && fair == members && len(union) == partitions && sum == partitions
	state = fmt.Sprintf("%d of %d members told their assignment, %d with a fair share; %d of %d partitions owned, %d owned twice",
		told, members, fair, len(union), partitions, sum-len(union))
	return ok, state
}

// waitBalanced waits until the first members members are balanced and
// stay so for quiet, and returns the time of the last change before that
// and the group requests counted then.
func (o *ownership) waitBalanced(ctx context.Context, members, partitions int, quiet time.Duration) (time.Time, int64, error) {
	for {
		o.mu.Lock()
		ok, state := o.balanceLocked(members, partitions)
		v, at, reqs := o.version, o.last, o.requestsAtLast
		o.mu.Unlock()
		var quietC <-chan time.Time
		t := time.NewTimer(quiet)
		if ok {
			quietC = t.C
		}
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, 0, fmt.Errorf("%w: %s", ctx.Err(), state)
		case <-o.changed:
		case <-quietC:
			o.mu.Lock()
			still := o.version == v
			o.mu.Unlock()
			if still {
				return at, reqs, nil
			}
		}
		t.Stop()
	}
}

// requestCounter counts the requests of each API key a set of clients
// sent (a franz-go hook).
type requestCounter struct{ n [128]atomic.Int64 }

var _ kgo.HookBrokerWrite = (*requestCounter)(nil)

func (c *requestCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err == nil && key >= 0 && int(key) < len(c.n) {
		c.n[key].Add(1)
	}
}

func (c *requestCounter) count(k kmsg.Key) int64 { return c.n[k].Load() }

// checkProtocol fails a case whose members spoke the other protocol.
func (c *requestCounter) checkProtocol(p groupProtocol) error {
	join, hb := c.count(kmsg.JoinGroup), c.count(kmsg.ConsumerGroupHeartbeat)
	if p.kip848 && join > 0 || !p.kip848 && hb > 0 || join+hb == 0 {
		return fmt.Errorf("%w: %s members sent %d JoinGroup and %d ConsumerGroupHeartbeat requests", errRebalanceProtocol, p.short, join, hb)
	}
	return nil
}

// rebalanceGroup is one case's group: its members and what they own.
type rebalanceGroup struct {
	b       *bench
	proto   groupProtocol
	name    string
	own     *ownership
	keys    *requestCounter
	members []*kgo.Client
	logs    []*memberLog // each member's client log (--rebalance-trace)
}

// start starts member m (0-based) of the group.
func (g *rebalanceGroup) start(m int) error {
	opts := []kgo.Opt{
		kgo.ConsumerGroup(g.name),
		kgo.ConsumeTopics(topicW10),
		kgo.Balancers(g.proto.balancer()),
		kgo.DisableAutoCommit(),
		kgo.WithHooks(g.keys),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { g.own.update(m, p, true) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { g.own.update(m, p, false) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { g.own.update(m, p, false) }),
	}
	opts = append(opts, g.traceOpts(m)...)
	if g.proto.kip848 {
		opts = append(opts, kgo.ServerSideBalancer())
	} else {
		opts = append(opts, kgo.HeartbeatInterval(g.b.cfg.GroupHeartbeat),
			kgo.SessionTimeout(classicSession), kgo.RebalanceTimeout(classicRebalance))
	}
	cl, err := g.b.client(opts...)
	if err != nil {
		return err
	}
	g.members[m] = cl
	return nil
}

// close closes every started member at once (each leaves the group).
func (g *rebalanceGroup) close() {
	var started []*kgo.Client
	for _, cl := range g.members {
		if cl != nil {
			started = append(started, cl)
		}
	}
	closeConcurrently(started)
}

// rebalanceTimes is one case's outcome: the times of its two joins, and
// the group requests (JoinGroup, or ConsumerGroupHeartbeat for KIP-848)
// its members sent until each was balanced.
type rebalanceTimes struct {
	join, plusOne         time.Duration
	joinReqs, plusOneReqs int64
}

// groupRequests is how many of its protocol's group requests g's members
// sent so far.
func (g *rebalanceGroup) groupRequests() int64 {
	if g.proto.kip848 {
		return g.keys.count(kmsg.ConsumerGroupHeartbeat)
	}
	return g.keys.count(kmsg.JoinGroup)
}

// rebalanceCase runs one protocol × member count: the join of n members,
// then the join of one more.
func (b *bench) rebalanceCase(ctx context.Context, p groupProtocol, n int) (rebalanceTimes, error) {
	var out rebalanceTimes
	ctx, cancel := context.WithTimeout(ctx, rebalanceCaseLimit)
	defer cancel()
	g := &rebalanceGroup{b: b, proto: p, name: fmt.Sprintf("kgbench-w10-%s-%d", p.short, n),
		own: newOwnership(n + 1), keys: new(requestCounter), members: make([]*kgo.Client, n+1)}
	for range n + 1 {
		g.logs = append(g.logs, new(memberLog))
	}
	defer g.close()
	g.own.requests = g.groupRequests
	parts := b.cfg.RebalancePartitions
	start := time.Now()
	for m := range n {
		if err := g.start(m); err != nil {
			return out, err
		}
	}
	stop := g.watch(ctx, n, fmt.Sprintf("%d members joining", n))
	at, reqs, err := g.own.waitBalanced(ctx, n, parts, rebalanceQuiet)
	stop()
	if err != nil {
		return out, fmt.Errorf("%d members joining: %w", n, err)
	}
	out.join, out.joinReqs = at.Sub(start), reqs
	before := g.groupRequests() // the quiet time's heartbeats count in neither
	start = time.Now()
	if err := g.start(n); err != nil {
		return out, err
	}
	stop = g.watch(ctx, n+1, fmt.Sprintf("one member joining %d", n))
	at, reqs, err = g.own.waitBalanced(ctx, n+1, parts, rebalanceQuiet)
	stop()
	if err != nil {
		return out, fmt.Errorf("one member joining %d: %w", n, err)
	}
	out.plusOne, out.plusOneReqs = at.Sub(start), reqs-before
	return out, g.keys.checkProtocol(p)
}

// rebalance is workload 10 (see the top of this file). A protocol's
// failure goes into its row and the next protocol runs.
func (b *bench) rebalance(ctx context.Context, rows []Result) error {
	if err := b.createTopics(ctx, map[string]int32{topicW10: int32(b.cfg.RebalancePartitions)}); err != nil {
		return err
	}
	cl, err := b.client()
	if err != nil {
		return err
	}
	versions, err := apiVersions(ctx, cl)
	cl.Close()
	if err != nil {
		return err
	}
	if err := b.warmCoordinator(ctx, coordinatorGroup, "kgbench-w10-warmup"); err != nil {
		return err
	}
	for i, p := range groupProtocols {
		row := &rows[i]
		if !slices.Contains(b.cfg.RebalanceProtocols, p.short) {
			row.Unsupported = "not selected (--rebalance-protocols)"
			continue
		}
		if p.kip848 {
			if err := checkSupport(versions, apiNeed{kmsg.ConsumerGroupHeartbeat, 1}); err != nil {
				row.Unsupported = err.Error()
				continue
			}
		}
		if err := b.measure(row, func() error { return b.rebalanceProtocol(ctx, p, row) }); err != nil {
			row.Error = err.Error()
		}
	}
	return nil
}

// rebalanceProtocol runs one protocol's cases and fills its row.
func (b *bench) rebalanceProtocol(ctx context.Context, p groupProtocol, row *Result) error {
	var joins, plus []Percentile
	var reqs []string
	for _, n := range b.cfg.RebalanceMembers {
		t, err := b.rebalanceCase(ctx, p, n)
		if err != nil {
			return fmt.Errorf("%d members: %w", n, err)
		}
		joins = append(joins, Percentile{Name: fmt.Sprintf("%s join %d", p.short, n), Ms: ms(t.join)})
		plus = append(plus, Percentile{Name: fmt.Sprintf("%s +1 to %d", p.short, n), Ms: ms(t.plusOne)})
		reqs = append(reqs, fmt.Sprintf("%d: %d (+1: %d)", n, t.joinReqs, t.plusOneReqs))
	}
	row.Latency = append(joins, plus...)
	reqName := kmsg.JoinGroup.Name()
	if p.kip848 {
		reqName = kmsg.ConsumerGroupHeartbeat.Name()
	}
	row.Notes = fmt.Sprintf("%s; %s joining a %d-partition topic at once, then one more; %s requests until balanced: %s",
		b.protocolSettings(ctx, p), joinList(b.cfg.RebalanceMembers), b.cfg.RebalancePartitions, reqName, strings.Join(reqs, ", "))
	return nil
}

// protocolSettings says how a protocol's members were set up.
func (b *bench) protocolSettings(ctx context.Context, p groupProtocol) string {
	if !p.kip848 {
		return fmt.Sprintf("classic %s balancer, heartbeat %s, session %s", p.balancer().ProtocolName(), b.cfg.GroupHeartbeat, classicSession)
	}
	interval, err := b.consumerHeartbeatInterval(ctx)
	if err != nil {
		return "server-side uniform assignor, heartbeat interval unknown: " + err.Error()
	}
	return fmt.Sprintf("server-side uniform assignor, heartbeat %s (the server's)", interval)
}

// consumerHeartbeatInterval is the KIP-848 heartbeat interval the server
// hands out: one member joins a group of its own and leaves again.
func (b *bench) consumerHeartbeatInterval(ctx context.Context) (time.Duration, error) {
	cl, err := b.client()
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group = "kgbench-w10-probe"
	req.MemberID = base64.RawURLEncoding.EncodeToString(id)
	req.RebalanceTimeoutMillis = int32(classicRebalance.Milliseconds())
	req.SubscribedTopicNames = []string{topicW10}
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{} // owned: none (null is invalid when joining)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, err
	}
	leave := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	leave.Group, leave.MemberID, leave.MemberEpoch = req.Group, req.MemberID, -1
	_, _ = leave.RequestWith(ctx, cl)
	return time.Duration(resp.HeartbeatIntervalMillis) * time.Millisecond, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// joinList is e.g. "10 and 100 members".
func joinList(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	if len(s) == 1 {
		return s[0] + " members"
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1] + " members"
}
