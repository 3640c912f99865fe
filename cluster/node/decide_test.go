package node

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/kgateway/kgateway/cluster/diskless"
)

// TestPlacement runs testdata/placement: the rendezvous preference and
// place's decisions, for the live nodes and the node's view of each slot.
//
//	prefer live=(1,2,3)     one slot per input line; prints its preferred node
//	place self=1 live=(1,2,3)
//	<pkey> [held] [broken] [owner=<node>] [gone]
//
// gone: the node holds pkey but it is no longer a slot (deleted topic).
func TestPlacement(t *testing.T) {
	datadriven.RunTest(t, "testdata/placement", func(t *testing.T, d *datadriven.TestData) string {
		var live []int
		d.ScanArgs(t, "live", &live)
		nodes := make([]int32, len(live))
		for i, id := range live {
			nodes[i] = int32(id)
		}
		switch d.Cmd {
		case "prefer":
			var b strings.Builder
			for _, pkey := range strings.Fields(d.Input) {
				fmt.Fprintf(&b, "%s -> %d\n", pkey, preferred(pkey, nodes))
			}
			return b.String()
		case "place":
			var self int
			d.ScanArgs(t, "self", &self)
			v := placeView{self: int32(self), name: strconv.Itoa(self), live: nodes,
				held: map[string]heldView{}, owners: map[string]string{}}
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				f := strings.Fields(line)
				if len(f) == 0 {
					continue
				}
				pkey, gone := f[0], false
				for _, w := range f[1:] {
					switch {
					case w == "held":
						v.held[pkey] = v.held[pkey]
					case w == "broken":
						v.held[pkey] = heldView{broken: true}
					case w == "gone":
						gone = true
					case strings.HasPrefix(w, "owner="):
						v.owners[pkey] = strings.TrimPrefix(w, "owner=")
					default:
						d.Fatalf(t, "unknown word %q", w)
					}
				}
				if !gone {
					v.slots = append(v.slots, pkey)
				}
			}
			p := place(v)
			var b strings.Builder
			for _, r := range p.release {
				fmt.Fprintf(&b, "release %s (%s)\n", r.pkey, r.why)
			}
			for _, pkey := range p.acquire {
				fmt.Fprintf(&b, "acquire %s\n", pkey)
			}
			for _, pkey := range p.gone {
				fmt.Fprintf(&b, "release %s (%s)\n", pkey, releaseGone)
			}
			if b.Len() == 0 {
				return "nothing\n"
			}
			return b.String()
		default:
			d.Fatalf(t, "unknown command %q", d.Cmd)
			return ""
		}
	})
}

// TestRebuildPlan runs testdata/rebuild: what planRebuild copies (the bounded rebuild) of
// a partition published as [start, end) in the input's ranges, one
// "<base>-<end> <bytes>" per line, oldest first.
//
//	plan start=<n> end=<n> budget=<bytes, -1: all>
func TestRebuildPlan(t *testing.T) {
	datadriven.RunTest(t, "testdata/rebuild", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "plan" {
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		var start, end, budget int64
		d.ScanArgs(t, "start", &start)
		d.ScanArgs(t, "end", &end)
		d.ScanArgs(t, "budget", &budget)
		var ranges []diskless.Range
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			if line == "" {
				continue
			}
			var r diskless.Range
			if _, err := fmt.Sscanf(line, "%d-%d %d", &r.Base, &r.End, &r.Len); err != nil {
				d.Fatalf(t, "range %q: %v", line, err)
			}
			ranges = append(ranges, r)
		}
		p := planRebuild(start, end, ranges, budget)
		var b strings.Builder
		fmt.Fprintf(&b, "from %d\n", p.from)
		var bytes int64
		for _, r := range p.copy {
			fmt.Fprintf(&b, "copy %d-%d %d\n", r.Base, r.End, r.Len)
			bytes += r.Len
		}
		fmt.Fprintf(&b, "copied %d of %d ranges, %d bytes\n", len(p.copy), len(ranges), bytes)
		if p.trimTo >= 0 {
			fmt.Fprintf(&b, "trim to %d\n", p.trimTo)
		}
		fmt.Fprintf(&b, "local start %d\n", p.localStart)
		return b.String()
	})
}

// TestUpkeepPlan runs testdata/upkeep: what planUpkeep publishes for a
// served partition (the bounded rebuild, periodic state export).
//
//	upkeep local=(<start>,<end>) published=<n> since-export=<dur> interval=<dur> covered=<n>
func TestUpkeepPlan(t *testing.T) {
	datadriven.RunTest(t, "testdata/upkeep", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "upkeep" {
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		var v upkeepView
		var since, interval string
		d.ScanArgs(t, "local", &v.localStart, &v.localEnd)
		d.ScanArgs(t, "published", &v.published)
		d.ScanArgs(t, "since-export", &since)
		d.ScanArgs(t, "interval", &interval)
		d.ScanArgs(t, "covered", &v.stateCovered)
		var err error
		if v.sinceExport, err = time.ParseDuration(since); err != nil {
			d.Fatalf(t, "since-export: %v", err)
		}
		if v.stateInterval, err = time.ParseDuration(interval); err != nil {
			d.Fatalf(t, "interval: %v", err)
		}
		p := planUpkeep(v)
		var b strings.Builder
		if p.exportState {
			b.WriteString("export state\n")
		}
		if p.publishStart >= 0 {
			fmt.Fprintf(&b, "publish start %d\n", p.publishStart)
		}
		if b.Len() == 0 {
			return "nothing\n"
		}
		return b.String()
	})
}
