package main

// report.go turns results into the printed table and the JSON file.

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Result is one cell row of the table: one system × one workload. Numbers
// that a workload does not measure stay zero and are omitted from JSON.
type Result struct {
	System   string `json:"system"`
	Workload string `json:"workload"`
	// Round is the 0-based round the result is from; a summary row carries
	// the first round it folds that did not error.
	Round         int          `json:"round"`
	Records       int          `json:"records,omitempty"`
	MBps          float64      `json:"mb_per_s,omitempty"` // 1 MB = 10^6 bytes
	RecordsPerSec float64      `json:"records_per_s,omitempty"`
	Latency       []Percentile `json:"latency,omitempty"`
	RSSBytes      int64        `json:"rss_bytes,omitempty"`
	PeakRSSBytes  int64        `json:"peak_rss_bytes,omitempty"`
	Seconds       float64      `json:"seconds"` // wall time of the workload
	// ServerCPUSeconds is the server process's user+system CPU time during
	// the workload (fills and topic creation included).
	ServerCPUSeconds float64 `json:"server_cpu_s"`
	// ClientCPUSeconds is kgbench's own (the franz-go clients') CPU time
	// during the workload: with client and server on one small machine,
	// server CPU + client CPU against wall time × cores shows when the
	// machine, not the server, is the limit.
	ClientCPUSeconds float64 `json:"client_cpu_s"`
	Notes            string  `json:"notes,omitempty"`
	Error            string  `json:"error,omitempty"`
	// Unsupported says why the server cannot serve the row (e.g. it does
	// not advertise an API the row needs): no figures, and no error.
	Unsupported string `json:"unsupported,omitempty"`
}

// Percentile is one latency figure, e.g. {"ack p99", 3.2}.
type Percentile struct {
	Name string  `json:"name"`
	Ms   float64 `json:"ms"`
}

// Report is the JSON document --out receives.
type Report struct {
	Started time.Time `json:"started"`
	Host    hostInfo  `json:"host"`
	Config  *config   `json:"config"`
	Results []Result  `json:"results"` // every round's, round by round
	// Summary has one row per system × workload (see summarizeCell); the
	// table and the chart show it. Files from before --rounds lack it.
	Summary []Result `json:"summary"`
}

// hostInfo records what the numbers were measured on and with.
type hostInfo struct {
	GOOS     string            `json:"goos"`
	GOARCH   string            `json:"goarch"`
	NumCPU   int               `json:"num_cpu"`
	MemTotal string            `json:"mem_total"` // from /proc/meminfo
	Kernel   string            `json:"kernel"`
	Go       string            `json:"go"`
	Modules  map[string]string `json:"modules"` // franz-go, kfake versions
	// Disk is the --work-dir disk probe; nil with --disk-probe=false and in
	// files from before it existed.
	Disk *diskInfo `json:"disk,omitempty"`
}

func newReport(cfg *config) *Report {
	return &Report{Started: time.Now().UTC(), Host: gatherHost(), Config: cfg}
}

func gatherHost() hostInfo {
	h := hostInfo{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, NumCPU: runtime.NumCPU(),
		Go: runtime.Version(), Modules: map[string]string{}}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		first, _, _ := strings.Cut(string(b), "\n") // "MemTotal: 24000000 kB"
		if f := strings.Fields(first); len(f) > 1 {
			h.MemTotal = strings.Join(f[1:], " ")
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if strings.HasPrefix(d.Path, "github.com/twmb/franz-go") {
				h.Modules[d.Path] = d.Version
			}
		}
	}
	return h
}

// percentiles returns the nearest-rank quantiles qs of samples, named
// "<prefix> p50" etc. No samples gives no figures rather than zeros.
func percentiles(prefix string, samples []time.Duration, qs ...float64) []Percentile {
	if len(samples) == 0 {
		return nil
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	out := make([]Percentile, 0, len(qs))
	for _, q := range qs {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		i = max(0, min(i, len(s)-1))
		out = append(out, Percentile{
			Name: fmt.Sprintf("%s p%s", prefix, strings.TrimPrefix(fmt.Sprint(q*100), "0")),
			Ms:   float64(s[i]) / float64(time.Millisecond),
		})
	}
	return out
}

// writeTable prints the results as a Markdown table, one row per
// system × workload, so it can be pasted into BENCHMARKS.md as is.
func writeTable(w io.Writer, results []Result) {
	fmt.Fprintln(w, "| system | workload | MB/s | records/s | latency (ms) | server CPU s | client CPU s | notes |")
	fmt.Fprintln(w, "|---|---|---:|---:|---|---:|---:|---|")
	for _, r := range results {
		mbps, rps, notes := fmtRate(r.MBps), fmtRate(r.RecordsPerSec), r.Notes
		cpu, ccpu := fmt.Sprintf("%.2f", r.ServerCPUSeconds), fmt.Sprintf("%.2f", r.ClientCPUSeconds)
		if r.RSSBytes > 0 {
			notes = join("; ", notes, fmt.Sprintf("RSS %s (peak %s)", fmtBytes(r.RSSBytes), fmtBytes(r.PeakRSSBytes)))
		}
		switch {
		case r.Error != "":
			mbps, rps, cpu, ccpu, notes = "ERROR", "ERROR", "–", "–", "error: "+truncate(r.Error, 160)
		case r.Unsupported != "":
			mbps, rps, cpu, ccpu, notes = "unsupported", "unsupported", "–", "–", truncate(r.Unsupported, 160)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.System, r.Workload, mbps, rps, fmtLatency(r.Latency), cpu, ccpu, escapeCell(notes))
	}
}

func fmtRate(v float64) string {
	switch {
	case v == 0:
		return "–"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

func fmtLatency(ps []Percentile) string {
	if len(ps) == 0 {
		return "–"
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%s %.2f", p.Name, p.Ms)
	}
	return strings.Join(parts, ", ")
}

func fmtBytes(n int64) string {
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

func join(sep string, parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, sep)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func escapeCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// loadReport reads an earlier --out file. A file from before --rounds has
// no summary: it is summarized as the one round it is.
func loadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if rep.Summary == nil {
		var systems []string
		if rep.Config != nil {
			systems = rep.Config.Systems
		}
		rep.Summary = summarize(systems, rep.Results)
	}
	return &rep, nil
}

// printReport prints the disk probe's line (when there is one) and the
// summary table.
func printReport(w io.Writer, rep *Report) {
	if rep.Host.Disk != nil {
		fmt.Fprintln(w, rep.Host.Disk)
		fmt.Fprintln(w)
	}
	writeTable(w, rep.Summary)
}

// writeJSON writes the report to path ("" = skip).
func writeJSON(path string, rep *Report) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
