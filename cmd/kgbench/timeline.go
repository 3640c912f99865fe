package main

// timeline.go is instrumentation for short throughput runs: --timeline
// prints, for workloads 1 and 3, when each response of the measured
// client arrived relative to the workload's clock start. At 2 GB/s half
// a gigabyte takes a quarter of a second, so one 100 ms stall (a slow
// first request, a long poll waiting out MaxWait, a session reset) moves
// the figure by 40%; the timeline tells such a stall from a round that
// is slow throughout. It is off by default and changes nothing a client
// sends.

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// stallGap is the gap between two responses that the timeline lists.
const stallGap = 5 * time.Millisecond

// timelineWindow is the width of the timeline's MB/s steps.
const timelineWindow = 50 * time.Millisecond

// tlEvent is one response read by a client.
type tlEvent struct {
	at          time.Duration // response read, since the clock start
	key         int16
	bytes       int // written and read
	wait, taken time.Duration
}

// timeline is a franz-go hook recording every response from begin on.
type timeline struct {
	out io.Writer
	mu  struct {
		sync.Mutex
		start  time.Time
		events []tlEvent
	}
}

var _ kgo.HookBrokerE2E = (*timeline)(nil)

func newTimeline() *timeline { return &timeline{out: os.Stderr} }

func (t *timeline) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.start.IsZero() {
		return
	}
	t.mu.events = append(t.mu.events, tlEvent{at: now.Sub(t.mu.start), key: key,
		bytes: e.BytesWritten + e.BytesRead, wait: e.WriteWait, taken: e.TimeToRead})
}

// begin starts the clock (a nil timeline does nothing).
func (t *timeline) begin() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.start, t.mu.events = time.Now(), nil
}

// write prints the timeline of responses of key (0 Produce, 1 Fetch) of
// a workload that took end, and stops the clock.
func (t *timeline) write(label string, key int16, end time.Duration) {
	if t == nil {
		return
	}
	t.mu.Lock()
	events := t.mu.events
	t.mu.start, t.mu.events = time.Time{}, nil
	t.mu.Unlock()
	w := t.out
	var gaps []time.Duration
	var first, last, stalled time.Duration
	n := 0
	for _, e := range events {
		switch {
		case e.key != key && n == 0:
			fmt.Fprintf(w, "timeline %s: %7.2f ms key %d (server %.2f ms)\n", label, ms(e.at), e.key, ms(e.taken))
		case e.key != key:
		case n == 0:
			first = e.at
			fmt.Fprintf(w, "timeline %s: %7.2f ms first key %d (queued %.2f ms, server %.2f ms)\n", label, ms(e.at), key, ms(e.wait), ms(e.taken))
		default:
			g := e.at - last
			gaps = append(gaps, g)
			if g > stallGap {
				stalled += g
				fmt.Fprintf(w, "timeline %s: %7.2f ms gap %.2f ms before response %d\n", label, ms(e.at), ms(g), n+1)
			}
		}
		if e.key == key {
			n++
			last = e.at
		}
	}
	slices.Sort(gaps)
	fmt.Fprintf(w, "timeline %s: end %.1f ms, %d responses from %.2f to %.2f ms; gaps p50 %.2f p90 %.2f p99 %.2f max %.2f ms, %.1f ms in gaps over %v\n",
		label, ms(end), n, ms(first), ms(last), ms(pick(gaps, .5)), ms(pick(gaps, .9)), ms(pick(gaps, .99)), ms(pick(gaps, 1)), ms(stalled), stallGap)
	fmt.Fprintf(w, "timeline %s: MB/s per %v:%s\n", label, timelineWindow, windowRates(events, key, end))
}

// windowRates is the MB/s of key's responses in each timelineWindow.
func windowRates(events []tlEvent, key int16, end time.Duration) string {
	bytes := make([]int, int(end/timelineWindow)+1)
	for _, e := range events {
		if i := int(e.at / timelineWindow); e.key == key && i < len(bytes) {
			bytes[i] += e.bytes
		}
	}
	var b []byte
	for _, n := range bytes {
		b = fmt.Appendf(b, " %.0f", float64(n)/bytesPerMB/timelineWindow.Seconds())
	}
	return string(b)
}

// pick is the q quantile of sorted xs (0 for none).
func pick(xs []time.Duration, q float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	return xs[int(q*float64(len(xs)-1))]
}
