package node

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kgateway/kgateway/resolver"
)

// TestPlacementSimulation simulates rendezvous placement for clusters of 3, 10,
// 50 and 200 nodes: the spread of partitions over the nodes, and what
// moves when one node joins or leaves. Rendezvous hashing promises that a
// join moves partitions only to the new node and a leave only those of
// the node that left; the test fails if either moves anything else, or if
// the spread is far from even. It prints the table BENCHMARKS.md quotes.
//
// 10,000 partitions by default (about a second);
// KGW_PLACEMENT_PARTITIONS=100000 runs the reported size.
func TestPlacementSimulation(t *testing.T) {
	parts := 10_000
	if v := os.Getenv("KGW_PLACEMENT_PARTITIONS"); v != "" {
		if _, err := fmt.Sscan(v, &parts); err != nil {
			t.Fatalf("KGW_PLACEMENT_PARTITIONS=%q: %v", v, err)
		}
	}
	pkeys := simPKeys(parts)
	var table strings.Builder
	fmt.Fprintf(&table, "| nodes | partitions | per node min / mean / max | stddev / mean | join: moved (ideal) | leave: moved (ideal) |\n|---:|---:|---|---:|---|---|\n")
	for _, n := range []int{3, 10, 50, 200} {
		live := simNodes(n)
		owners := simPlace(pkeys, live)
		lo, mean, hi, cv := spread(owners, live)
		// A perfectly even spread with p = 1/n has a binomial stddev;
		// allow three times its relative size.
		if want := 3 * math.Sqrt((1-1/float64(n))/mean); cv > want {
			t.Errorf("%d nodes: stddev/mean %.3f, more than 3x a random spread's %.3f", n, cv, want/3)
		}

		joined := simPlace(pkeys, append(slices.Clone(live), int32(n+1)))
		joinMoved := 0
		for i := range pkeys {
			if joined[i] != owners[i] {
				joinMoved++
				if joined[i] != int32(n+1) {
					t.Fatalf("%d nodes, join: %s moved %d -> %d, not to the new node", n, pkeys[i], owners[i], joined[i])
				}
			}
		}
		gone := live[n/2]
		left := simPlace(pkeys, slices.DeleteFunc(slices.Clone(live), func(id int32) bool { return id == gone }))
		leaveMoved := 0
		for i := range pkeys {
			if left[i] != owners[i] {
				leaveMoved++
				if owners[i] != gone {
					t.Fatalf("%d nodes, leave of %d: %s moved %d -> %d although its owner stayed", n, gone, pkeys[i], owners[i], left[i])
				}
			} else if owners[i] == gone {
				t.Fatalf("%d nodes: %s still placed on %d, which left", n, pkeys[i], gone)
			}
		}
		fmt.Fprintf(&table, "| %d | %d | %d / %.0f / %d | %.3f | %.2f%% (%.2f%%) | %.2f%% (%.2f%%) |\n", n, parts, lo, mean, hi, cv,
			pct(joinMoved, parts), 100/float64(n+1), pct(leaveMoved, parts), 100/float64(n))
	}
	t.Logf("placement of %d partitions (cluster/node TestPlacementSimulation):\n%s", parts, table.String())
}

// simPKeys are the keys of parts partitions over topics of 100 partitions
// each, with random topic ids, as PKey makes them.
func simPKeys(parts int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	var out []string
	var id resolver.TopicID
	for i := range parts {
		if i%100 == 0 {
			for j := range id {
				id[j] = byte(r.UintN(256))
			}
		}
		out = append(out, PKey(id, int32(i%100)))
	}
	return out
}

func simNodes(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i + 1)
	}
	return out
}

// simPlace is where every partition goes: its preferred live node.
func simPlace(pkeys []string, live []int32) []int32 {
	out := make([]int32, len(pkeys))
	for i, k := range pkeys {
		out[i] = preferred(k, live)
	}
	return out
}

// spread is the fewest, mean and most partitions per node, and the
// stddev of the counts over their mean.
func spread(owners, live []int32) (lo int, mean float64, hi int, cv float64) {
	count := map[int32]int{}
	for _, o := range owners {
		count[o]++
	}
	mean = float64(len(owners)) / float64(len(live))
	lo = len(owners)
	var ss float64
	for _, id := range live {
		c := count[id]
		lo, hi = min(lo, c), max(hi, c)
		ss += (float64(c) - mean) * (float64(c) - mean)
	}
	return lo, mean, hi, math.Sqrt(ss/float64(len(live))) / mean
}

func pct(n, of int) float64 { return 100 * float64(n) / float64(of) }
