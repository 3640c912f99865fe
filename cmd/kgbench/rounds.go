package main

// rounds.go runs the systems × workloads set --rounds times and folds the
// rounds into one summary row per system × workload.
//
// On the development VM the first system to write pays for fresh
// page-cache memory, which moved results by 2×; so round r runs the
// systems rotated by r (no system always runs first), and the table shows
// medians over the rounds with their spread in the notes.

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// harness is what every round of one run shares.
type harness struct {
	cfg  *config
	root string // the run's temporary directory
	// The kgateway binary is built once per run, not once per round: the
	// build is not what is measured, and a failed build fails every round
	// the same way.
	built    bool
	bin      string
	buildErr error
	// tools/apachekafka, built once per run the same way.
	akBuilt    bool
	akBin      string
	akBuildErr error
}

func newHarness(cfg *config, root string) *harness {
	return &harness{cfg: cfg, root: root}
}

// kgatewayBin returns --kgateway-bin or the binary built into the root.
func (h *harness) kgatewayBin(ctx context.Context) (string, error) {
	if h.cfg.KgatewayBin != "" {
		return h.cfg.KgatewayBin, nil
	}
	if !h.built {
		h.bin, h.buildErr = buildKgateway(ctx, h.root)
		h.built = true
	}
	return h.bin, h.buildErr
}

// apacheKafkaBin returns tools/apachekafka built into the root.
func (h *harness) apacheKafkaBin(ctx context.Context) (string, error) {
	if !h.akBuilt {
		h.akBin, h.akBuildErr = buildMainCommand(ctx, h.root, "./tools/apachekafka")
		h.akBuilt = true
	}
	return h.akBin, h.akBuildErr
}

// roundOrder is the order round r (0-based) runs the systems in.
func roundOrder(systems []string, r int) []string {
	out := make([]string, len(systems))
	for i := range systems {
		out[i] = systems[(i+r)%len(systems)]
	}
	return out
}

// runRounds runs every round and returns every result, round by round.
// Each round has a directory of its own, so every system starts on a new
// data directory in every round (invariant 4).
func (h *harness) runRounds(ctx context.Context) []Result {
	var out []Result
	for r := range h.cfg.Rounds {
		order := roundOrder(h.cfg.Systems, r)
		if h.cfg.Rounds > 1 {
			fmt.Fprintf(os.Stderr, "== round %d of %d: %s\n", r+1, h.cfg.Rounds, strings.Join(order, ", "))
		}
		dir := filepath.Join(h.root, fmt.Sprintf("round-%d", r+1))
		for _, name := range order {
			for _, res := range h.benchSystem(ctx, dir, name) {
				res.Round = r
				out = append(out, res)
			}
		}
	}
	return out
}

// benchSystem starts one system, runs the selected workloads against it and
// stops it. A start failure yields one error row per selected workload.
func (h *harness) benchSystem(ctx context.Context, dir, name string) []Result {
	fmt.Fprintf(os.Stderr, "== %s: starting\n", name)
	sys, err := startSystem(ctx, h, dir, name)
	var out []Result
	if err != nil {
		fmt.Fprintf(os.Stderr, "== %s: failed to start: %v\n", name, err)
		for _, w := range h.cfg.Workloads {
			for _, row := range h.cfg.workloadRows(w) {
				out = append(out, Result{System: name, Workload: row, Error: "start: " + err.Error()})
			}
		}
		return out
	}
	defer h.retire(sys)
	b := newBench(h.cfg, sys)
	for _, w := range h.cfg.Workloads {
		fmt.Fprintf(os.Stderr, "== %s: workload %s\n", name, workloadNames[w-1])
		if _, err := warmPageCache(dir, h.cfg.WarmPageCache); err != nil {
			fmt.Fprintf(os.Stderr, "   %v\n", err)
		}
		rows := b.runWorkload(ctx, w)
		if rows[0].Error != "" {
			fmt.Fprintf(os.Stderr, "   error: %s\n", rows[0].Error)
		}
		out = append(out, rows...)
	}
	return out
}

// retire stops a system and, unless --keep-data, deletes its data at once
// rather than at the end of the run: with several rounds the data of
// finished systems would otherwise pile up on the disk the next one
// measures.
func (h *harness) retire(sys *system) {
	sys.stop()
	if !h.cfg.KeepData {
		if err := os.RemoveAll(sys.dataDir); err != nil {
			fmt.Fprintf(os.Stderr, "== %s: removing data: %v\n", sys.name, err)
		}
	}
}

// summarize folds the rounds into one row per system × workload, systems
// in the given order (then any others in first-seen order), workloads in
// the order they ran. See summarizeCell for what a row holds.
func summarize(systems []string, results []Result) []Result {
	type key struct{ system, workload string }
	cells := map[key][]Result{}
	var keys []key
	for _, r := range results {
		k := key{r.System, r.Workload}
		if _, ok := cells[k]; !ok {
			keys = append(keys, k)
		}
		cells[k] = append(cells[k], r)
	}
	order := slices.Clone(systems)
	for _, s := range uniqueSystems(results) {
		if !slices.Contains(order, s) {
			order = append(order, s)
		}
	}
	out := make([]Result, 0, len(keys))
	for _, sys := range order {
		for _, k := range keys {
			if k.system == sys {
				out = append(out, summarizeCell(cells[k]))
			}
		}
	}
	return out
}

// summarizeCell folds one system × workload's rounds: the medians of the
// rounds that did not error (nor were unsupported), and the first round if
// none did. The other fields (notes, round) are the first good round's.
// One round is returned as it is.
func summarizeCell(rounds []Result) Result {
	var ok []Result
	for _, r := range rounds {
		if r.Error == "" && r.Unsupported == "" {
			ok = append(ok, r)
		}
	}
	if len(rounds) == 1 || len(ok) == 0 {
		return rounds[0]
	}
	s := ok[0]
	med := func(f func(Result) float64) float64 {
		xs := make([]float64, len(ok))
		for i, r := range ok {
			xs[i] = f(r)
		}
		return median(xs)
	}
	s.Records = int(math.Round(med(func(r Result) float64 { return float64(r.Records) })))
	s.MBps = med(func(r Result) float64 { return r.MBps })
	s.RecordsPerSec = med(func(r Result) float64 { return r.RecordsPerSec })
	s.RSSBytes = int64(med(func(r Result) float64 { return float64(r.RSSBytes) }))
	s.PeakRSSBytes = int64(med(func(r Result) float64 { return float64(r.PeakRSSBytes) }))
	s.Seconds = med(func(r Result) float64 { return r.Seconds })
	s.ServerCPUSeconds = med(func(r Result) float64 { return r.ServerCPUSeconds })
	s.ClientCPUSeconds = med(func(r Result) float64 { return r.ClientCPUSeconds })
	s.Latency = medianLatency(ok)
	s.Notes = join("; ", s.Notes, spreadNote(ok, len(rounds)))
	return s
}

// medianLatency is each percentile's median over the rounds that report
// it, in the first round's order.
func medianLatency(rounds []Result) []Percentile {
	var names []string
	byName := map[string][]float64{}
	for _, r := range rounds {
		for _, p := range r.Latency {
			if _, ok := byName[p.Name]; !ok {
				names = append(names, p.Name)
			}
			byName[p.Name] = append(byName[p.Name], p.Ms)
		}
	}
	var out []Percentile
	for _, n := range names {
		out = append(out, Percentile{Name: n, Ms: median(byName[n])})
	}
	return out
}

// spreadNote says how many rounds a summary row folds and how far apart
// they were: the min–max of MB/s, or of the first latency percentile for a
// workload without MB/s, e.g. "3 rounds: MB/s 412–455".
func spreadNote(ok []Result, total int) string {
	note := fmt.Sprintf("%d rounds", total)
	if len(ok) < total {
		note = fmt.Sprintf("%d of %d rounds ok", len(ok), total)
	}
	var xs []float64
	switch {
	case ok[0].MBps > 0:
		for _, r := range ok {
			xs = append(xs, r.MBps)
		}
		return fmt.Sprintf("%s: MB/s %s", note, fmtSpread(xs, fmtRate))
	case len(ok[0].Latency) > 0:
		name := ok[0].Latency[0].Name
		for _, r := range ok {
			if i := slices.IndexFunc(r.Latency, func(p Percentile) bool { return p.Name == name }); i >= 0 {
				xs = append(xs, r.Latency[i].Ms)
			}
		}
		return fmt.Sprintf("%s: %s %s ms", note, name, fmtSpread(xs, fmtMs))
	}
	return note
}

func fmtMs(v float64) string { return fmt.Sprintf("%.2f", v) }

// fmtSpread prints "min–max", or one value when they print the same.
func fmtSpread(xs []float64, f func(float64) string) string {
	lo, hi := f(slices.Min(xs)), f(slices.Max(xs))
	if lo == hi {
		return lo
	}
	return lo + "–" + hi
}

// median of xs (not modified); an even count gives the mean of the two
// middle values, no values gives 0.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 0 {
		return (s[m-1] + s[m]) / 2
	}
	return s[m]
}
