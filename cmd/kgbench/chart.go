package main

// chart.go draws the PNG: throughput per workload (top) and latency
// percentiles (bottom), one bar colour per system. Error cells have no bar.
// The latency axis is logarithmic: kgateway's few-millisecond percentiles
// stand beside a peer's hundreds, and on a linear axis they vanish.

import (
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// writeChart renders results to path as PNG ("" = skip).
func writeChart(path string, results []Result) error {
	if path == "" {
		return nil
	}
	systems := uniqueSystems(results)
	tput, err := barPlot("Throughput", "MB/s", systems, results, throughputSeries, false)
	if err != nil {
		return err
	}
	lat, err := latencyPlot(systems, results)
	if err != nil {
		return err
	}
	img := vgimg.New(vg.Points(1100), vg.Points(800))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6),
		PadLeft: vg.Points(6), PadRight: vg.Points(6), PadY: vg.Points(18)}
	canvases := plot.Align([][]*plot.Plot{{tput}, {lat}}, tiles, dc)
	tput.Draw(canvases[0][0])
	lat.Draw(canvases[1][0])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// latencyPlot draws the latency percentiles on a logarithmic axis.
func latencyPlot(systems []string, results []Result) (*plot.Plot, error) {
	return barPlot("Latency", "ms (log scale)", systems, results, latencySeries, true)
}

// series maps results to category labels and, per system, one value per
// category (0 where the system has no figure).
type series func(systems []string, results []Result) (cats []string, vals map[string]plotter.Values)

// barPlot draws grouped bars: one group per category, one bar per system,
// on a logarithmic value axis when logY is set.
func barPlot(title, unit string, systems []string, results []Result, s series, logY bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = unit
	p.Legend.Top = true
	cats, vals := s(systems, results)
	if len(cats) == 0 {
		p.Title.Text += " (no data)"
		return p, nil
	}
	width := vg.Points(min(28, 700/float64(len(cats)*max(1, len(systems)))))
	floor := logFloor(vals)
	for i, sys := range systems {
		v := vals[sys]
		if logY {
			v = aboveFloor(v, floor)
		}
		bc, err := plotter.NewBarChart(v, width)
		if err != nil {
			return nil, err
		}
		if logY {
			// A bar is drawn from the value below it; log(0) does not exist,
			// so every bar stands on the axis floor instead of on 0.
			base, err := plotter.NewBarChart(constValues(len(v), floor), width)
			if err != nil {
				return nil, err
			}
			bc.StackOn(base)
		}
		bc.Color = plotutil.Color(i)
		bc.LineStyle.Width = 0
		bc.Offset = vg.Length(float64(i)-float64(len(systems)-1)/2) * width
		p.Add(bc)
		p.Legend.Add(sys, bc)
	}
	p.NominalX(cats...)
	if !logY {
		p.Y.Min, p.Y.Max = 0, p.Y.Max*1.15 // headroom for the legend
		return p, nil
	}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = floor, p.Y.Max*3 // headroom for the legend
	return p, nil
}

// logFloor is the bottom of a log axis: a decade below the power of ten at
// or below the smallest positive value, so the shortest bar still spans a
// decade (1 when there is no value).
func logFloor(vals map[string]plotter.Values) float64 {
	smallest := math.Inf(1)
	for _, v := range vals {
		for _, x := range v {
			if x > 0 {
				smallest = min(smallest, x)
			}
		}
	}
	if math.IsInf(smallest, 1) {
		return 1
	}
	return math.Pow(10, math.Floor(math.Log10(smallest))-1)
}

// aboveFloor turns values into bar heights above floor; a cell without a
// figure (0) gets no bar.
func aboveFloor(v plotter.Values, floor float64) plotter.Values {
	out := make(plotter.Values, len(v))
	for i, x := range v {
		out[i] = max(x-floor, 0)
	}
	return out
}

func constValues(n int, x float64) plotter.Values {
	out := make(plotter.Values, n)
	for i := range out {
		out[i] = x
	}
	return out
}

// throughputSeries: every workload that measured MB/s.
// throughputSeries has one category per workload row, in workload order
// (rows are named after their workload's number) even when the first
// system's row of a workload errored and another system's came first.
func throughputSeries(systems []string, results []Result) ([]string, map[string]plotter.Values) {
	results = slices.Clone(results)
	slices.SortStableFunc(results, func(a, b Result) int { return workloadNumber(a.Workload) - workloadNumber(b.Workload) })
	return collect(systems, results, func(r Result, add func(string, float64)) {
		if r.MBps > 0 {
			add(r.Workload, r.MBps)
		}
	})
}

// latencySeries: every latency percentile any workload reported.
func latencySeries(systems []string, results []Result) ([]string, map[string]plotter.Values) {
	return collect(systems, results, func(r Result, add func(string, float64)) {
		for _, l := range r.Latency {
			add(l.Name, l.Ms)
		}
	})
}

// collect builds categories in first-seen order and fills each system's
// values; cells without a figure stay 0.
func collect(systems []string, results []Result, each func(Result, func(string, float64))) ([]string, map[string]plotter.Values) {
	var cats []string
	cell := map[[2]string]float64{}
	for _, r := range results {
		if r.Error != "" {
			continue
		}
		each(r, func(cat string, v float64) {
			if !slices.Contains(cats, cat) {
				cats = append(cats, cat)
			}
			cell[[2]string{r.System, cat}] = v
		})
	}
	vals := make(map[string]plotter.Values, len(systems))
	for _, sys := range systems {
		v := make(plotter.Values, len(cats))
		for i, c := range cats {
			v[i] = cell[[2]string{sys, c}]
		}
		vals[sys] = v
	}
	return cats, vals
}

func uniqueSystems(results []Result) []string {
	var out []string
	for _, r := range results {
		if !slices.Contains(out, r.System) {
			out = append(out, r.System)
		}
	}
	return out
}

// workloadNumber is the number a row's name starts with (0 if none).
func workloadNumber(name string) int {
	digits, _, _ := strings.Cut(name, " ")
	n, _ := strconv.Atoi(digits)
	return n
}
