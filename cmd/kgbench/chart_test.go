package main

import (
	"os"
	"path/filepath"
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
