package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The latency chart is logarithmic: a 2 ms percentile beside a 400 ms one
// still gets a bar a good part of the axis high (on a linear axis it would
// be half a percent of it), and cells without a figure draw nothing.
func TestLatencyChartLogScale(t *testing.T) {
	results := []Result{
		{System: "kgateway", Workload: "1", Latency: []Percentile{{"ack p50", 2}, {"ack p99", 6}}},
		{System: "peer", Workload: "1", Latency: []Percentile{{"ack p50", 400}, {"ack p99", 900}}},
		{System: "broken", Workload: "1", Error: "start: boom"},
	}
	systems := uniqueSystems(results)
	p, err := latencyPlot(systems, results)
	if err != nil {
		t.Fatal(err)
	}
	if h := p.Y.Norm(2) - p.Y.Norm(p.Y.Min); h < 0.2 {
		t.Errorf("a 2 ms bar beside 900 ms fills %.3f of the axis, want at least 0.2 (log scale)", h)
	}
	if p.Y.Min <= 0 || p.Y.Min > 2 || p.Y.Max < 900 {
		t.Errorf("latency axis [%g, %g] must be positive and hold 2..900", p.Y.Min, p.Y.Max)
	}
	path := filepath.Join(t.TempDir(), "chart.png")
	if err := writeChart(path, results); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("chart not written: %v", err)
	}
}

// Throughput bars follow the workload numbers, also when the first
// system's row of workload 8 errored and only its workload 9 rows have
// bars.
func TestThroughputCategoriesInWorkloadOrder(t *testing.T) {
	results := []Result{
		{System: "kgateway", Workload: "8 transactions", Error: "refused"},
		{System: "kgateway", Workload: isolationRows[0], MBps: 3},
		{System: "kgateway", Workload: isolationRows[1], MBps: 3},
		{System: "kfake", Workload: "8 transactions", MBps: 1},
		{System: "kfake", Workload: isolationRows[0], MBps: 2},
		{System: "kfake", Workload: isolationRows[1], MBps: 2},
	}
	cats, vals := throughputSeries([]string{"kgateway", "kfake"}, results)
	if want := []string{"8 transactions", isolationRows[0], isolationRows[1]}; !slices.Equal(cats, want) {
		t.Errorf("categories %q, want %q", cats, want)
	}
	if got := vals["kgateway"]; got[0] != 0 || got[1] != 3 {
		t.Errorf("kgateway values %v", got)
	}
}
