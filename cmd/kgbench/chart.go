package main

// chart.go draws the PNG: throughput per workload (top) and latency
// percentiles (bottom), one bar colour per system. Error cells have no bar.

import (
	"os"
	"slices"

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
	tput, err := barPlot("Throughput", "MB/s", systems, results, throughputSeries)
	if err != nil {
		return err
	}
	lat, err := barPlot("Latency", "ms", systems, results, latencySeries)
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

// series maps results to category labels and, per system, one value per
// category (0 where the system has no figure).
type series func(systems []string, results []Result) (cats []string, vals map[string]plotter.Values)

// barPlot draws grouped bars: one group per category, one bar per system.
func barPlot(title, unit string, systems []string, results []Result, s series) (*plot.Plot, error) {
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
	for i, sys := range systems {
		bc, err := plotter.NewBarChart(vals[sys], width)
		if err != nil {
			return nil, err
		}
		bc.Color = plotutil.Color(i)
		bc.LineStyle.Width = 0
		bc.Offset = vg.Length(float64(i)-float64(len(systems)-1)/2) * width
		p.Add(bc)
		p.Legend.Add(sys, bc)
	}
	p.NominalX(cats...)
	p.Y.Min, p.Y.Max = 0, p.Y.Max*1.15 // headroom for the legend
	return p, nil
}

// throughputSeries: every workload that measured MB/s.
func throughputSeries(systems []string, results []Result) ([]string, map[string]plotter.Values) {
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
