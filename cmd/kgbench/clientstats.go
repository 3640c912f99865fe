package main

// clientstats.go is instrumentation for explaining the client CPU column:
// --client-stats counts what kgbench's franz-go clients send and receive
// per workload (requests by key, their bytes, batches and records per
// Produce request, requests in flight, throttles), and --cpu-profile
// writes a CPU profile of kgbench itself per system and workload. Both are
// off by default and change nothing a client sends.

import (
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// clientStats is a franz-go hook that totals one workload's traffic.
type clientStats struct {
	out io.Writer // where write prints: stderr, a buffer in tests
	mu  struct {
		sync.Mutex
		reqs, wrote, read map[int16]int64 // by request key
		readErrs          int64
		batches, records  int64 // produce batches acknowledged
		batchBytes        int64
		inflight, maxIn   int64 // produce requests written, not yet read
		inflightSum       int64 // in flight summed at each produce write
		lastAck           time.Time
		burstAcks         int64         // produce responses < 200µs after the previous
		readWait          time.Duration // summed produce readWait
		throttles         int64
		sizes             [6]int64 // produce request size classes, see sizeClass
	}
}

var (
	_ kgo.HookBrokerWrite         = (*clientStats)(nil)
	_ kgo.HookBrokerRead          = (*clientStats)(nil)
	_ kgo.HookProduceBatchWritten = (*clientStats)(nil)
	_ kgo.HookBrokerThrottle      = (*clientStats)(nil)
)

func newClientStats() *clientStats {
	s := &clientStats{out: os.Stderr}
	s.resetLocked()
	return s
}

// resetLocked zeroes the totals; the caller holds mu or owns s alone.
func (s *clientStats) resetLocked() {
	m := &s.mu
	m.reqs, m.wrote, m.read = map[int16]int64{}, map[int16]int64{}, map[int16]int64{}
	m.readErrs, m.batches, m.records, m.batchBytes = 0, 0, 0, 0
	m.inflight, m.maxIn, m.inflightSum, m.burstAcks, m.throttles = 0, 0, 0, 0, 0
	m.lastAck, m.readWait, m.sizes = time.Time{}, 0, [6]int64{}
}

func (s *clientStats) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked()
}

var sizeClassNames = [6]string{"<64KiB", "<1MiB", "<4MiB", "<16MiB", "<32MiB", ">=32MiB"}

func sizeClass(n int) int {
	for i, limit := range []int{64 << 10, 1 << 20, 4 << 20, 16 << 20, 32 << 20} {
		if n < limit {
			return i
		}
	}
	return 5
}

func (s *clientStats) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, n int, _, _ time.Duration, _ error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.reqs[key]++
	s.mu.wrote[key] += int64(n)
	if key == 0 { // Produce
		s.mu.inflight++
		s.mu.maxIn = max(s.mu.maxIn, s.mu.inflight)
		s.mu.inflightSum += s.mu.inflight
		s.mu.sizes[sizeClass(n)]++
	}
}

func (s *clientStats) OnBrokerRead(_ kgo.BrokerMetadata, key int16, n int, wait, _ time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.read[key] += int64(n)
	if err != nil {
		s.mu.readErrs++
	}
	if key != 0 {
		return
	}
	s.mu.inflight--
	s.mu.readWait += wait
	now := time.Now()
	if now.Sub(s.mu.lastAck) < 200*time.Microsecond {
		s.mu.burstAcks++
	}
	s.mu.lastAck = now
}

func (s *clientStats) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.ProduceBatchMetrics) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.batches++
	s.mu.records += int64(m.NumRecords)
	s.mu.batchBytes += int64(m.CompressedBytes)
}

func (s *clientStats) OnBrokerThrottle(kgo.BrokerMetadata, time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.throttles++
}

// write prints the totals for one workload that took secs seconds, and
// the change of the runtime's counters (rt0 before, rt1 after).
func (s *clientStats) write(label string, secs float64, rt0, rt1 []float64) {
	w := s.out
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &s.mu
	fmt.Fprintf(w, "client-stats %s: %.2fs\n", label, secs)
	keys := make([]int, 0, len(m.reqs))
	for k := range m.reqs {
		keys = append(keys, int(k))
	}
	sort.Ints(keys)
	for _, k := range keys {
		n := m.reqs[int16(k)]
		fmt.Fprintf(w, "  key %2d: %7d reqs %8.1f/s, mean req %9.0f B, mean resp %7.0f B\n",
			k, n, float64(n)/secs, float64(m.wrote[int16(k)])/float64(n), float64(m.read[int16(k)])/float64(n))
	}
	if p := m.reqs[0]; p > 0 {
		fmt.Fprintf(w, "  produce: %d batches (%.1f/req), %.0f records/batch, %.0f B/batch, in flight at write mean %.2f max %d, readWait mean %v, burst acks %d (%.0f%%)\n",
			m.batches, float64(m.batches)/float64(p), float64(m.records)/float64(max(m.batches, 1)),
			float64(m.batchBytes)/float64(max(m.batches, 1)), float64(m.inflightSum)/float64(p), m.maxIn,
			m.readWait/time.Duration(p), m.burstAcks, 100*float64(m.burstAcks)/float64(p))
		fmt.Fprint(w, "  produce request sizes:")
		for i, n := range m.sizes {
			fmt.Fprintf(w, " %s %d", sizeClassNames[i], n)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  read errors %d, throttles %d\n", m.readErrs, m.throttles)
	fmt.Fprint(w, " ")
	for i, name := range runtimeMetrics {
		fmt.Fprintf(w, " %s %.3g", name, rt1[i]-rt0[i])
	}
	fmt.Fprintln(w)
}

// observe runs fn with --client-stats and --cpu-profile applied to the
// workload labelled label; without either it just runs fn.
func (b *bench) observe(label string, fn func() error) error {
	var prof *os.File
	if b.cfg.CPUProfile != "" {
		name := fmt.Sprintf("%s-%s.pprof", b.cfg.CPUProfile, label)
		for r := 2; fileExists(name); r++ { // a later round
			name = fmt.Sprintf("%s-%s-r%d.pprof", b.cfg.CPUProfile, label, r)
		}
		f, err := os.Create(name)
		if err == nil {
			if err = pprof.StartCPUProfile(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "kgbench: no CPU profile for %s: %v\n", label, err)
		} else {
			prof = f
		}
	}
	if b.stats != nil {
		b.stats.reset()
	}
	rt0 := readRuntime()
	start := time.Now()
	err := fn()
	secs := time.Since(start).Seconds()
	rt1 := readRuntime()
	if prof != nil {
		pprof.StopCPUProfile()
		prof.Close()
	}
	if b.stats != nil {
		b.stats.write(label, secs, rt0, rt1)
	}
	return err
}

// runtimeMetrics are the Go runtime's counters --client-stats reports the
// change of per workload: where the client's CPU went, and its GC.
var runtimeMetrics = []string{
	"/cpu/classes/user:cpu-seconds",
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/scavenge/total:cpu-seconds",
	"/gc/cycles/total:gc-cycles",
	"/gc/heap/allocs:bytes",
}

// readRuntime samples runtimeMetrics as float64s.
func readRuntime() []float64 {
	s := make([]metrics.Sample, len(runtimeMetrics))
	for i, name := range runtimeMetrics {
		s[i].Name = name
	}
	metrics.Read(s)
	out := make([]float64, len(s))
	for i := range s {
		switch s[i].Value.Kind() {
		case metrics.KindUint64:
			out[i] = float64(s[i].Value.Uint64())
		case metrics.KindFloat64:
			out[i] = s[i].Value.Float64()
		}
	}
	return out
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
