package main

// perftest.go is workload 12: Apache Kafka's own producer benchmark,
// kafka-producer-perf-test (org.apache.kafka.tools.ProducerPerformance of
// Kafka 4.4.0, on the classpath of test/jvm), run with the same flags
// against every system, so that the field's standard tool and the Java
// producer give the comparison too, not only franz-go.
//
// The topic is created first like every other workload's (one partition,
// replication factor 1); then one JVM, with the heap of
// kafka-producer-perf-test.sh (-Xmx512M) and the JVM flags of
// kafka-run-class.sh, produces --perf-records (default: --records)
// records of --record-size bytes
// with no throttle (--throughput -1), acks=all, linger.ms = --linger,
// compression.type = --compression and enable.idempotence = --idempotent,
// the Java producer's defaults otherwise (batch.size 16384). The tool's
// summary line gives the row: records/s (MB/s is records/s × record size in
// 10⁶ bytes, kgbench's unit; the tool's own MB/sec, in 2²⁰ bytes, is in the
// notes) and its latencies: avg, max, p50, p95, p99, p99.9 in ms, measured
// by the tool from send to acknowledgement. Client CPU is the JVM's.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const (
	topicW12        = "kgbench-w12"
	workloadPerf    = 12
	perfMain        = "org.apache.kafka.tools.ProducerPerformance"
	perfHeap        = "-Xmx512M" // kafka-producer-perf-test.sh's KAFKA_HEAP_OPTS
	perfTestVersion = "4.4.0"
)

// kafkaJVMOpts are kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS (the
// broker gets the same from test/apachekafka), and an English locale so
// that the tool prints decimal points.
var kafkaJVMOpts = []string{"-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
	"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
	"-XX:MaxInlineLevel=15", "-Djava.awt.headless=true", "-Duser.language=en", "-Duser.country=US"}

var (
	errPerfSummary = errors.New("kgbench: no summary line in kafka-producer-perf-test's output")
	errPerfShort   = errors.New("kgbench: kafka-producer-perf-test sent fewer records than asked")
)

// perfSummary is the tool's final line.
type perfSummary struct {
	Records              int
	RecordsPerSec        float64
	MiBps                float64 // the tool's "MB/sec": 2^20 bytes
	AvgMs, MaxMs         float64
	Median, Pct95, Pct99 float64 // ms
	Pct999               float64 // ms
	SummaryLineRaw       string
}

// perfSummaryLine matches e.g. "20000 records sent, 1293.577388
// records/sec (1.26 MB/sec), 6763.30 ms avg latency, 9706.00 ms max
// latency, 8213 ms 50th, 9503 ms 95th, 9611 ms 99th, 9704 ms 99.9th."
// The tool's progress lines lack the percentiles.
var perfSummaryLine = regexp.MustCompile(`^(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, ([\d.]+) ms 50th, ([\d.]+) ms 95th, ([\d.]+) ms 99th, ([\d.]+) ms 99\.9th\.?$`)

// parsePerfOutput finds the last summary line in the tool's output.
func parsePerfOutput(out []byte) (perfSummary, error) {
	lines := strings.Split(string(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		m := perfSummaryLine.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		var f [9]float64
		for j := range f {
			v, err := strconv.ParseFloat(m[j+1], 64)
			if err != nil {
				return perfSummary{}, fmt.Errorf("%w: %q: %v", errPerfSummary, lines[i], err)
			}
			f[j] = v
		}
		return perfSummary{Records: int(f[0]), RecordsPerSec: f[1], MiBps: f[2], AvgMs: f[3], MaxMs: f[4],
			Median: f[5], Pct95: f[6], Pct99: f[7], Pct999: f[8], SummaryLineRaw: strings.TrimSpace(lines[i])}, nil
	}
	return perfSummary{}, fmt.Errorf("%w: %s", errPerfSummary, lastLines(out, 3))
}

// perfArgs is the java command line after "java" for a run against addr.
func (c *config) perfArgs(classpath, addr string) []string {
	args := append([]string{perfHeap}, kafkaJVMOpts...)
	args = append(args, "-cp", classpath, perfMain,
		"--bootstrap-server", addr,
		"--topic", topicW12,
		"--num-records", strconv.Itoa(c.perfRecords()),
		"--record-size", strconv.Itoa(c.RecordSize),
		"--throughput", "-1",
		"--command-property")
	return append(args, c.perfProducerProps()...)
}

// perfRecords is --perf-records, or --records when it is 0.
func (c *config) perfRecords() int {
	if c.PerfRecords > 0 {
		return c.PerfRecords
	}
	return c.Records
}

// perfProducerProps are the Java producer's settings: kgbench's client
// settings, spelled as Kafka's producer configs.
func (c *config) perfProducerProps() []string {
	comp := c.Compression
	if comp == "" {
		comp = "none"
	}
	return []string{
		"acks=all",
		"linger.ms=" + strconv.FormatInt(c.Linger.Milliseconds(), 10),
		"compression.type=" + comp,
		"enable.idempotence=" + strconv.FormatBool(c.Idempotent),
		"client.id=kgbench-perf",
	}
}

// producerPerfTest is workload 12 (see the top of this file).
func (b *bench) producerPerfTest(ctx context.Context, res *Result) error {
	if b.cfg.Security.Protocol != "PLAINTEXT" {
		return fmt.Errorf("%w: kgbench passes no security settings to kafka-producer-perf-test", errUnsupported)
	}
	cp, err := kafkaClasspath()
	if err != nil {
		return err
	}
	if err := b.createTopics(ctx, map[string]int32{topicW12: 1}); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "java", b.cfg.perfArgs(cp, b.sys.addr)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	if ps := cmd.ProcessState; ps != nil {
		res.ClientCPUSeconds += (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	if runErr != nil {
		return fmt.Errorf("kafka-producer-perf-test: %w: %s", runErr, lastLines(out.Bytes(), 3))
	}
	sum, err := parsePerfOutput(out.Bytes())
	if err != nil {
		return err
	}
	if sum.Records < b.cfg.perfRecords() {
		return fmt.Errorf("%w: %d of %d", errPerfShort, sum.Records, b.cfg.perfRecords())
	}
	b.fillPerfRow(res, sum)
	return nil
}

// fillPerfRow turns the tool's summary into the row.
func (b *bench) fillPerfRow(res *Result, sum perfSummary) {
	res.Records = sum.Records
	res.RecordsPerSec = sum.RecordsPerSec
	res.MBps = sum.RecordsPerSec * float64(b.cfg.RecordSize) / bytesPerMB
	res.Latency = []Percentile{
		{"perf avg", sum.AvgMs}, {"perf p50", sum.Median}, {"perf p95", sum.Pct95},
		{"perf p99", sum.Pct99}, {"perf p99.9", sum.Pct999}, {"perf max", sum.MaxMs},
	}
	res.Notes = fmt.Sprintf("Kafka %s ProducerPerformance, %s: the tool's %.2f MB/sec (2^20 B); wall time and client CPU include the JVM's start",
		perfTestVersion, strings.Join(b.cfg.perfProducerProps()[:4], " "), sum.MiBps)
}
