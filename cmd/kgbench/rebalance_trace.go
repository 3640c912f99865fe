package main

// rebalance_trace.go is workload 10's --rebalance-trace: each member keeps
// its client's log (info level) in memory, and a case still unbalanced
// after the trace time prints to stderr what every member owns, its member
// id and epoch, its log, and for KIP-848 the coordinator's own view (a
// ConsumerGroupDescribe); the same again once the case ends. It is for
// finding out who a long rebalance waited for; it costs a little client CPU
// (the log lines), so it is off by default.

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const traceLines = 400 // lines of log kept per member

// memberLog is a member's client log, the last traceLines lines.
type memberLog struct {
	mu    sync.Mutex
	lines []string
}

var _ kgo.Logger = (*memberLog)(nil)

func (l *memberLog) Level() kgo.LogLevel { return kgo.LogLevelInfo }

func (l *memberLog) Log(level kgo.LogLevel, msg string, kv ...any) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s %s", time.Now().Format("15:04:05.000000"), level, msg)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&sb, " %v=%v", kv[i], kv[i+1])
	}
	l.mu.Lock()
	if len(l.lines) >= traceLines {
		l.lines = slices.Delete(l.lines, 0, len(l.lines)-traceLines+1)
	}
	l.lines = append(l.lines, sb.String())
	l.mu.Unlock()
}

func (l *memberLog) dump(w io.Writer, prefix string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		fmt.Fprintln(w, prefix, s)
	}
}

// traceOpts are member m's extra client options under --rebalance-trace.
func (g *rebalanceGroup) traceOpts(m int) []kgo.Opt {
	if g.b.cfg.RebalanceTrace <= 0 {
		return nil
	}
	return []kgo.Opt{kgo.WithLogger(g.logs[m])}
}

// watch reports the group (report) if it is not balanced within the trace
// time, and once more when the returned stop is called after that.
func (g *rebalanceGroup) watch(ctx context.Context, members int, what string) (stop func()) {
	if g.b.cfg.RebalanceTrace <= 0 {
		return func() {}
	}
	start := time.Now()
	var mu sync.Mutex // held while reporting, so that stop waits for a report under way
	var stopped, fired bool
	t := time.AfterFunc(g.b.cfg.RebalanceTrace, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		fired = true
		g.report(ctx, os.Stderr, members, fmt.Sprintf("%s: unbalanced %s after its start", what, time.Since(start).Round(time.Millisecond)))
	})
	return func() {
		t.Stop()
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		if fired {
			g.report(ctx, os.Stderr, members, fmt.Sprintf("%s: ended %s after its start", what, time.Since(start).Round(time.Millisecond)))
		}
	}
}

// report prints what each member owns and says, and the coordinator's
// description of a KIP-848 group.
func (g *rebalanceGroup) report(ctx context.Context, w io.Writer, members int, why string) {
	ok, state := g.own.balance(members, g.b.cfg.RebalancePartitions)
	fmt.Fprintf(w, "== kgbench trace %s %s: balanced %v: %s\n", g.name, why, ok, state)
	g.own.mu.Lock()
	for m := range members {
		id, gen := "", int32(-1)
		if g.members[m] != nil {
			id, gen = g.members[m].GroupMetadata()
		}
		parts := make([]int32, 0, len(g.own.owned[m]))
		for p := range g.own.owned[m] {
			parts = append(parts, p)
		}
		slices.Sort(parts)
		fmt.Fprintf(w, "member %d id %s epoch %d told %v owns %v\n", m, id, gen, g.own.told[m], parts)
	}
	g.own.mu.Unlock()
	if g.proto.kip848 {
		g.describe(ctx, w)
	}
	for m := range members {
		g.logs[m].dump(w, fmt.Sprintf("member %d:", m))
	}
}

// describe prints the coordinator's view of the group.
func (g *rebalanceGroup) describe(ctx context.Context, w io.Writer) {
	cl, err := g.b.client()
	if err != nil {
		fmt.Fprintln(w, "describe:", err)
		return
	}
	defer cl.Close()
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{g.name}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Groups) != 1 {
		fmt.Fprintln(w, "describe:", err)
		return
	}
	d := resp.Groups[0]
	fmt.Fprintf(w, "describe: %v state %s epoch %d assignment epoch %d\n", kerr.ErrorForCode(d.ErrorCode), d.State, d.Epoch, d.AssignmentEpoch)
	for _, m := range d.Members {
		fmt.Fprintf(w, "describe member %s epoch %d assigned %v target %v\n", m.MemberID, m.MemberEpoch, partsOf(m.Assignment), partsOf(m.TargetAssignment))
	}
}

func partsOf(a kmsg.Assignment) []int32 {
	var out []int32
	for _, t := range a.TopicPartitions {
		out = append(out, t.Partitions...)
	}
	slices.Sort(out)
	return out
}
