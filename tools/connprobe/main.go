// Command connprobe measures, per new connection, how long a Kafka
// server takes to answer what a client sends first, so that two servers
// run side by side (kgateway and kfake, say) can be compared request by
// request. The targets are probed interleaved: one connection (or one
// group) to each in turn, so that a loaded machine weighs on both alike.
//
// -mode raw dials, sends ApiVersions v4, Metadata v12 (no topics) and
// FindCoordinator v4 one after another on one connection, with a bare
// kmsg client, and prints the median [p10 p90] of each step in ms.
//
// -mode group starts -members franz-go consumer-group members back to
// back on a new group (as kgbench's workload 10 does) and prints, per
// member, when each broker request was written (w) and its response
// read (r) since the first member's start: wS.18 is the seed
// connection's ApiVersions, w0.11 the first JoinGroup to node 0; and the
// gaps between some of them: the client's own time (a read to the next
// write) apart from a round trip (a write to its read).
//
// -mode sizes prints the response sizes of ApiVersions, a 100-partition
// Metadata and FindCoordinator.
//
//	go run ./tools/connprobe -mode group -members 10 -n 30 \
//	  -targets kg=127.0.0.1:9092,kf=127.0.0.1:9093
package main

import (
	"flag"
	"fmt"
	"log"
	"sort"
	"strings"
	"time"
)

// topic is the topic the group members consume (made with 100
// partitions if it is missing).
const topic = "connprobe"

type target struct{ name, addr string }

// samples are one target's durations by step.
type samples map[string][]time.Duration

func main() {
	n := flag.Int("n", 200, "connections (raw) or groups (group) per target")
	targets := flag.String("targets", "", "name=host:port,name=host:port")
	mode := flag.String("mode", "raw", "raw, group or sizes")
	members := flag.Int("members", 10, "group mode: members per group")
	flag.Parse()
	var ts []target
	for _, p := range strings.Split(*targets, ",") {
		name, addr, ok := strings.Cut(p, "=")
		if !ok {
			log.Fatalf("connprobe: target %q is not name=host:port", p)
		}
		ts = append(ts, target{name, addr})
	}
	var probe func(target) (samples, error)
	switch *mode {
	case "raw":
		probe = func(t target) (samples, error) { return raw(t.addr) }
	case "group":
		for _, t := range ts {
			if err := ensureTopic(t.addr); err != nil {
				log.Fatalf("connprobe: %s: %v", t.name, err)
			}
		}
		probe = func(t target) (samples, error) { return group(t.addr, *members) }
	case "sizes":
		for _, t := range ts {
			if err := sizes(t.name, t.addr); err != nil {
				log.Fatalf("connprobe: %s: %v", t.name, err)
			}
		}
		return
	default:
		log.Fatalf("connprobe: unknown -mode %q", *mode)
	}
	all := map[string]samples{}
	for range *n {
		for _, t := range ts {
			s, err := probe(t)
			if err != nil {
				log.Fatalf("connprobe: %s: %v", t.name, err)
			}
			if all[t.name] == nil {
				all[t.name] = samples{}
			}
			for k, v := range s {
				all[t.name][k] = append(all[t.name][k], v...)
			}
		}
	}
	for _, t := range ts {
		print(t.name, all[t.name])
	}
}

// print prints a target's steps by their median.
func print(name string, s samples) {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return median(s[keys[i]]) < median(s[keys[j]]) })
	for _, k := range keys {
		ds := sorted(s[k])
		fmt.Printf("%-6s %-16s n=%4d %7.2f [%6.2f %7.2f]\n", name, k, len(ds),
			ms(ds[len(ds)/2]), ms(ds[len(ds)/10]), ms(ds[len(ds)*9/10]))
	}
}

func sorted(ds []time.Duration) []time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

func median(ds []time.Duration) time.Duration { return sorted(ds)[len(ds)/2] }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
