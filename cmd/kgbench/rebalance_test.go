package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// inProcessKfake starts a one-broker kfake in the test's process and a
// bench against it with the given flags.
func inProcessKfake(t *testing.T, flags []string, opts ...kfake.Opt) (*bench, *kfake.Cluster) {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg, err := parseFlags(append([]string{"--workload-timeout", "1m"}, flags...))
	if err != nil {
		t.Fatal(err)
	}
	return newBench(cfg, &system{name: "kfake", addr: c.ListenAddrs()[0]}), c
}

// withoutKeys is kfake advertising every API it serves but keys.
func withoutKeys(keys ...kmsg.Key) kfake.Opt {
	v := kversion.Tip()
	for _, k := range keys {
		v.SetMaxKeyVersion(int16(k), -1)
	}
	return kfake.MaxVersions(v)
}

func figureNames(r Result) []string {
	var out []string
	for _, p := range r.Latency {
		out = append(out, p.Name)
	}
	return out
}

// TestRebalanceAgainstKfake runs workload 10 at toy sizes against an
// in-process kfake: every protocol's row has a join and a "+1" figure per
// group size, and the KIP-848 row names the heartbeat interval the server
// handed out. 5 members on 6 partitions is uneven (one or two each), and
// the sixth member's join must move a partition to it.
func TestRebalanceAgainstKfake(t *testing.T) {
	b, _ := inProcessKfake(t, []string{"--rebalance-members", "2,5", "--rebalance-partitions", "6"},
		kfake.BrokerConfigs(map[string]string{"group.consumer.heartbeat.interval.ms": "200"}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rows := b.runWorkload(ctx, workloadRebalance)
	if got := len(rows); got != len(groupProtocols) {
		t.Fatalf("%d rows, want %d", got, len(groupProtocols))
	}
	for i, p := range groupProtocols {
		r := rows[i]
		if r.Workload != p.row || r.Error != "" || r.Unsupported != "" {
			t.Fatalf("row %d: %+v", i, r)
		}
		want := []string{p.short + " join 2", p.short + " join 5", p.short + " +1 to 2", p.short + " +1 to 5"}
		if got := figureNames(r); !slices.Equal(got, want) {
			t.Errorf("%s: figures %q, want %q", p.row, got, want)
		}
		for _, f := range r.Latency {
			if f.Ms <= 0 || f.Ms > 60_000 {
				t.Errorf("%s: %s = %.2f ms", p.row, f.Name, f.Ms)
			}
		}
		req := "JoinGroup"
		if p.kip848 {
			req = "ConsumerGroupHeartbeat"
		}
		if !strings.Contains(r.Notes, req+" requests until balanced: 2: ") || !strings.Contains(r.Notes, ", 5: ") {
			t.Errorf("%s: notes %q lack the request counts", p.row, r.Notes)
		}
	}
	if !strings.Contains(rows[2].Notes, "heartbeat 200ms (the server's)") {
		t.Errorf("KIP-848 notes %q lack the server's heartbeat interval", rows[2].Notes)
	}
	if b.failed {
		t.Error("a healthy run marked the server failed")
	}
}

// TestRebalanceKIP848Unsupported: a server without ConsumerGroupHeartbeat
// (kgateway before KIP-848) gets an "unsupported" KIP-848 row at once,
// not a classic rebalance measured under the KIP-848 name (franz-go falls
// back to classic by itself) and not an error; the classic rows are
// measured as usual.
func TestRebalanceKIP848Unsupported(t *testing.T) {
	b, _ := inProcessKfake(t, []string{"--rebalance-members", "2", "--rebalance-partitions", "4"},
		withoutKeys(kmsg.ConsumerGroupHeartbeat, kmsg.ConsumerGroupDescribe))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows := b.runWorkload(ctx, workloadRebalance)
	for _, r := range rows[:2] {
		if r.Error != "" || r.Unsupported != "" || len(r.Latency) != 2 {
			t.Errorf("classic row: %+v", r)
		}
	}
	r := rows[2]
	if r.Error != "" || !strings.Contains(r.Unsupported, "ConsumerGroupHeartbeat (ApiVersions key 68)") || len(r.Latency) != 0 {
		t.Errorf("KIP-848 row against a server without it: %+v", r)
	}
	if b.failed {
		t.Error("an unsupported row marked the server failed")
	}
}

func TestCheckProtocol(t *testing.T) {
	classic, kip848 := groupProtocols[0], groupProtocols[2]
	for _, tc := range []struct {
		p             groupProtocol
		join, hb      int64
		wantMismatch  bool
		wantInMessage string
	}{
		{classic, 3, 0, false, ""},
		{kip848, 0, 7, false, ""},
		{kip848, 1, 7, true, "1 JoinGroup"}, // fell back to classic
		{classic, 3, 1, true, "1 ConsumerGroupHeartbeat"},
		{classic, 0, 0, true, "0 JoinGroup"}, // no group at all
	} {
		c := new(requestCounter)
		c.n[kmsg.JoinGroup].Store(tc.join)
		c.n[kmsg.ConsumerGroupHeartbeat].Store(tc.hb)
		err := c.checkProtocol(tc.p)
		if errors.Is(err, errRebalanceProtocol) != tc.wantMismatch || err != nil && !strings.Contains(err.Error(), tc.wantInMessage) {
			t.Errorf("%s with %d JoinGroup, %d heartbeats: %v", tc.p.short, tc.join, tc.hb, err)
		}
	}
}

// own builds the ownership of len(parts) members; nil means the member
// has had no assignment callback yet.
func own(parts ...[]int32) *ownership {
	o := newOwnership(len(parts))
	for m, ps := range parts {
		if ps != nil {
			o.update(m, map[string][]int32{topicW10: ps}, true)
		}
	}
	return o
}

func TestOwnershipBalance(t *testing.T) {
	for _, tc := range []struct {
		name       string
		o          *ownership
		partitions int
		want       bool
		wantState  string
	}{
		{"even", own([]int32{0, 1}, []int32{2, 3}), 4, true, "0 owned twice"},
		{"uneven but fair", own([]int32{0, 1}, []int32{2}), 3, true, ""},
		{"unfair", own([]int32{0, 1, 2}, []int32{3}), 4, false, "0 with a fair share"},
		{"owned twice", own([]int32{0, 1}, []int32{1, 2, 3}), 4, false, "1 owned twice"},
		{"a partition unowned", own([]int32{0}, []int32{1, 2}), 4, false, "3 of 4 partitions owned"},
		{"more members than partitions", own([]int32{0}, []int32{}, []int32{1}), 2, true, ""},
		{"a member not told yet", own([]int32{0}, nil, []int32{1}), 2, false, "2 of 3 members told"},
	} {
		ok, state := tc.o.balance(len(tc.o.owned), tc.partitions)
		if ok != tc.want || !strings.Contains(state, tc.wantState) {
			t.Errorf("%s: balanced %v (%s), want %v", tc.name, ok, state, tc.want)
		}
	}
	// A revocation takes partitions away; the member stays told.
	o := own([]int32{0, 1}, []int32{2, 3})
	o.update(1, map[string][]int32{topicW10: {3}}, false)
	if ok, state := o.balance(2, 4); ok || !strings.Contains(state, "3 of 4 partitions owned") {
		t.Errorf("after a revocation: %v, %s", ok, state)
	}
	// The first members only: a member started later does not count yet.
	if ok, _ := own([]int32{0, 1}, []int32{2, 3}, nil).balance(2, 4); !ok {
		t.Error("a third member not started yet unbalanced the first two")
	}
}

// waitBalanced returns the time of the change that balanced the group,
// not of a change it saw earlier, and an unbalanced group's state when
// the context ends.
func TestWaitBalanced(t *testing.T) {
	o := own([]int32{0, 1, 2}, []int32{3}) // unfair
	var requests atomic.Int64
	o.requests = requests.Load
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type outcome struct {
		at   time.Time
		reqs int64
	}
	done := make(chan outcome, 1)
	go func() {
		at, reqs, err := o.waitBalanced(ctx, 2, 4, 50*time.Millisecond)
		if err != nil {
			t.Error(err)
		}
		done <- outcome{at, reqs}
	}()
	requests.Store(5)
	o.update(0, map[string][]int32{topicW10: {2}}, false)
	requests.Store(7)
	o.update(1, map[string][]int32{topicW10: {2}}, true)
	o.mu.Lock()
	balancedAt := o.last
	o.mu.Unlock()
	requests.Store(9) // heartbeats after the balance count for nothing
	if got := <-done; !got.at.Equal(balancedAt) || got.reqs != 7 {
		t.Errorf("balanced at %v after %d requests, want the last change %v, 7", got.at, got.reqs, balancedAt)
	}
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	_, _, err := own([]int32{0, 1}, []int32{1, 2, 3}).waitBalanced(short, 2, 4, time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 owned twice") {
		t.Errorf("an unbalanced group: %v", err)
	}
}

// serve-kfake applies --group-heartbeat: the KIP-848 interval a real
// kfake child hands out is the flag's.
func TestKfakeChildHeartbeatInterval(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	cfg, err := parseFlags([]string{"--systems", "kfake", "--group-heartbeat", "300ms"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := startSystem(ctx, newHarness(cfg, t.TempDir()), t.TempDir(), "kfake")
	if err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	got, err := newBench(cfg, s).consumerHeartbeatInterval(ctx)
	if err != nil || got != 300*time.Millisecond {
		t.Fatalf("heartbeat interval %v, %v; want 300ms", got, err)
	}
}

func TestJoinList(t *testing.T) {
	for ns, want := range map[string]string{"10": "10 members", "10,100": "10 and 100 members", "1,2,3": "1, 2 and 3 members"} {
		in, _ := parseInts(ns)
		if got := joinList(in); got != want {
			t.Errorf("joinList(%v) = %q, want %q", in, got, want)
		}
	}
}

// --rebalance-protocols runs only the rows it names; the others are
// reported as not selected, not as failures.
func TestRebalanceProtocolsSelectRows(t *testing.T) {
	b, _ := inProcessKfake(t, []string{"--rebalance-members", "2", "--rebalance-partitions", "2", "--rebalance-protocols", "eager"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows := b.runWorkload(ctx, workloadRebalance)
	for i, p := range groupProtocols {
		r := rows[i]
		ran := r.Error == "" && r.Unsupported == "" && len(r.Latency) == 2
		if selected := p.short == "eager"; ran != selected || !selected && !strings.Contains(r.Unsupported, "not selected") {
			t.Errorf("%s: selected %v, row %+v", p.row, selected, r)
		}
	}
}
