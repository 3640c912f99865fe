package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func TestParseBootstrapLine(t *testing.T) {
	addr, pid, err := parseBootstrapLine("bootstrap 127.0.0.1:37045 pid 24684\n")
	if err != nil || addr != "127.0.0.1:37045" || pid != 24684 {
		t.Errorf("got %q, %d, %v", addr, pid, err)
	}
	for _, bad := range []string{
		"", "bootstrap 127.0.0.1:37045", "bootstrap 127.0.0.1 pid 1", "bootstrap 127.0.0.1:1 pid -3",
		"bootstrap 127.0.0.1:1 pid 0", "[2026-12-06] INFO Kafka Server started", "bootstrap 127.0.0.1:1 pid 12 extra",
	} {
		if _, _, err := parseBootstrapLine(bad); !errors.Is(err, errBootstrapLine) {
			t.Errorf("parseBootstrapLine(%q): err %v, want errBootstrapLine", bad, err)
		}
	}
}

// perfOutput is kafka-producer-perf-test 4.4.0's output against a broker
// (a deprecation warning, progress lines, then the summary).
const perfOutput = `Option --producer-props has been deprecated and will be removed in a future version. Use --command-property instead.
181 records sent, 35.8 records/sec (0.03 MB/sec), 1155.9 ms avg latency, 4205.0 ms max latency.
5535 records sent, 1096.5 records/sec (1.07 MB/sec), 2675.6 ms avg latency, 5443.0 ms max latency.
20000 records sent, 1293.577388 records/sec (1.26 MB/sec), 6763.30 ms avg latency, 9706.00 ms max latency, 8213 ms 50th, 9503 ms 95th, 9611 ms 99th, 9704 ms 99.9th.
`

func TestParsePerfOutput(t *testing.T) {
	got, err := parsePerfOutput([]byte(perfOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := perfSummary{Records: 20000, RecordsPerSec: 1293.577388, MiBps: 1.26, AvgMs: 6763.30, MaxMs: 9706,
		Median: 8213, Pct95: 9503, Pct99: 9611, Pct999: 9704, SummaryLineRaw: strings.Split(perfOutput, "\n")[3]}
	if got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	// Only progress lines (the tool died before its summary): an error,
	// not a row made of a progress line.
	progress := strings.Join(strings.Split(perfOutput, "\n")[:3], "\n")
	if _, err := parsePerfOutput([]byte(progress)); !errors.Is(err, errPerfSummary) {
		t.Errorf("progress lines only: err %v, want errPerfSummary", err)
	}
}

func TestFillPerfRow(t *testing.T) {
	cfg, err := parseFlags([]string{"--record-size", "1000", "--linger", "20ms", "--compression", "lz4"})
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{cfg: cfg}
	sum, err := parsePerfOutput([]byte(perfOutput))
	if err != nil {
		t.Fatal(err)
	}
	var res Result
	b.fillPerfRow(&res, sum)
	if res.Records != 20000 || res.RecordsPerSec != 1293.577388 || res.MBps != 1.293577388 {
		t.Errorf("row %+v", res)
	}
	var names []string
	for _, p := range res.Latency {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"perf avg", "perf p50", "perf p95", "perf p99", "perf p99.9", "perf max"}) ||
		res.Latency[4].Ms != 9704 {
		t.Errorf("latency %+v", res.Latency)
	}
	if !strings.Contains(res.Notes, "linger.ms=20 compression.type=lz4") {
		t.Errorf("notes %q lack the producer settings", res.Notes)
	}
}

// The tool gets kgbench's client settings, and the same command line for
// every system but the address.
func TestPerfArgs(t *testing.T) {
	cfg, err := parseFlags([]string{"--records", "5000", "--record-size", "512", "--idempotent=false"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg.perfArgs("CP", "127.0.0.1:1"), cfg.perfArgs("CP", "127.0.0.1:2")
	line := strings.Join(a, " ")
	for _, want := range []string{
		"-Xmx512M -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20",
		"-cp CP org.apache.kafka.tools.ProducerPerformance --bootstrap-server 127.0.0.1:1 --topic kgbench-w12 --num-records 5000 --record-size 512 --throughput -1",
		"--command-property acks=all linger.ms=5 compression.type=none enable.idempotence=false",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("command line %q lacks %q", line, want)
		}
	}
	i := slices.Index(a, "127.0.0.1:1")
	a[i] = "127.0.0.1:2"
	if !slices.Equal(a, b) {
		t.Errorf("command lines differ beyond the address:\n%q\n%q", a, b)
	}
	cfg.PerfRecords = 300
	if line := strings.Join(cfg.perfArgs("CP", "x"), " "); !strings.Contains(line, "--num-records 300 ") {
		t.Errorf("--perf-records 300: %q", line)
	}
}

// startSleeper starts `sleep 60` as a stand-in process and reaps it at
// the end of the test.
func startSleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// A system with a serving pid of its own (Kafka's JVM under its wrapper)
// reports that process's CPU time and RSS, not the wrapper's. Here the
// "wrapper" is an idle sleep and the serving process is this test, which
// burns CPU first.
func TestProcFiguresComeFromTheServingPid(t *testing.T) {
	wrapper := startSleeper(t)
	deadline := time.Now().Add(10 * time.Second)
	for selfCPUSeconds() < 0.2 && time.Now().Before(deadline) {
		for i := 0; i < 1e6; i++ {
			_ = i * i
		}
	}
	s := &system{name: "kafka", cmd: wrapper, pid: os.Getpid(), exited: make(chan struct{})}
	cpu, err := s.cpuSeconds()
	if err != nil {
		t.Fatal(err)
	}
	wrapperCPU, err := procCPUSeconds(wrapper.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if cpu < 0.1 || wrapperCPU >= 0.1 {
		t.Errorf("cpuSeconds %.2f (this process burnt at least 0.2 s), the wrapper's %.2f", cpu, wrapperCPU)
	}
	rss, peak, err := s.memory()
	if err != nil {
		t.Fatal(err)
	}
	wrss, _, err := procMemory(wrapper.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// A Go test binary's RSS is several MiB, an idle sleep's well under.
	if rss < 4<<20 || peak < rss || wrss >= rss {
		t.Errorf("memory: rss %d peak %d, the wrapper's rss %d", rss, peak, wrss)
	}
}

// When the serving process dies, the watchdog stops the wrapper, so the
// workload ends as for a crashed kgateway, with the reason.
func TestWatchJVMStopsTheWrapperWhenTheJVMDies(t *testing.T) {
	jvm := startSleeper(t)
	s := &system{name: "kafka", logPath: os.DevNull, exited: make(chan struct{}), pid: jvm.Process.Pid}
	if err := s.launch("sleep", []string{"60"}, os.Environ()); err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	go s.watchJVM()
	if err := s.checkAlive(); err != nil {
		t.Fatalf("alive system: %v", err)
	}
	jvm.Process.Kill()
	jvm.Wait()
	if !s.exitedWithin(30 * time.Second) {
		t.Fatal("the wrapper still runs after the JVM died")
	}
	if err := s.checkAlive(); !errors.Is(err, errSystemExited) || !strings.Contains(err.Error(), "the JVM (pid") {
		t.Errorf("checkAlive: %v", err)
	}
}

func TestProcessAlive(t *testing.T) {
	if !processAlive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	cmd := startSleeper(t)
	cmd.Process.Kill()
	// Until it is reaped, the killed child is a zombie: not alive.
	deadline := time.Now().Add(10 * time.Second)
	for processAlive(cmd.Process.Pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if processAlive(cmd.Process.Pid) {
		t.Error("a killed child (a zombie) is alive")
	}
}

// kafkaAvailable skips the test when Java or Kafka's jars are missing.
func kafkaAvailable(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Apache Kafka")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java")
	}
	if _, err := kafkaClasspath(); err != nil {
		t.Skip(err)
	}
}

// TestKafkaSystem starts kafka-fsync as kgbench does (tools/apachekafka),
// runs workload 1 and the perf tool's workload 12 at toy sizes, and checks
// that CPU and RSS come from the broker's JVM, and that stopping the
// system stops the JVM.
func TestKafkaSystem(t *testing.T) {
	kafkaAvailable(t)
	cfg, err := parseFlags([]string{"--systems", "kafka-fsync", "--workloads", "1,12", "--records", "200",
		"--workload-timeout", "2m", "--disk-probe=false"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	h := newHarness(cfg, t.TempDir())
	s, err := startSystem(ctx, h, t.TempDir(), "kafka-fsync")
	if err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	if s.pid == s.cmd.Process.Pid {
		t.Fatal("the JVM's pid is the wrapper's")
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(s.pid) + "/cmdline")
	if err != nil || !strings.Contains(string(cmdline), "kafka.Kafka") || !strings.Contains(string(cmdline), "-Xmx1G") {
		t.Fatalf("pid %d is not the broker's JVM: %q %v", s.pid, cmdline, err)
	}
	b := newBench(cfg, s)
	for _, w := range cfg.Workloads {
		rows := b.runWorkload(ctx, w)
		r := rows[0]
		if r.Error != "" || r.Unsupported != "" || r.Records != 200 || r.MBps <= 0 || r.ServerCPUSeconds <= 0 {
			t.Errorf("workload %d: %+v", w, r)
		}
		if w == workloadPerf && len(r.Latency) != 6 {
			t.Errorf("perf test latencies %+v", r.Latency)
		}
	}
	rss, _, err := s.memory()
	if err != nil || rss < 100<<20 { // a JVM with a 1 GiB heap, not a Go wrapper
		t.Errorf("rss %d, %v", rss, err)
	}
	s.stop()
	if processAlive(s.pid) {
		t.Errorf("the JVM %d survived the system's stop", s.pid)
	}
}

// topicsLed: a topic is ready once Metadata shows all its partitions with
// a leader; Kafka answers CreateTopics before that.
func TestTopicsLed(t *testing.T) {
	led := kadm.PartitionDetails{0: {Partition: 0, Leader: 1}, 1: {Partition: 1, Leader: 1}}
	md := func(td kadm.TopicDetail) kadm.Metadata {
		td.Topic = "t"
		return kadm.Metadata{Topics: kadm.TopicDetails{"t": td}}
	}
	want := map[string]int32{"t": 2}
	if err := topicsLed(md(kadm.TopicDetail{Partitions: led}), want); err != nil {
		t.Errorf("led topic: %v", err)
	}
	for name, m := range map[string]kadm.Metadata{
		"missing":      {Topics: kadm.TopicDetails{}},
		"topic error":  md(kadm.TopicDetail{Err: kerr.UnknownTopicOrPartition}),
		"too few":      md(kadm.TopicDetail{Partitions: kadm.PartitionDetails{0: {Leader: 1}}}),
		"no leader":    md(kadm.TopicDetail{Partitions: kadm.PartitionDetails{0: {Leader: 1}, 1: {Partition: 1, Leader: -1}}}),
		"leader error": md(kadm.TopicDetail{Partitions: kadm.PartitionDetails{0: {Leader: 1}, 1: {Partition: 1, Leader: 1, Err: kerr.LeaderNotAvailable}}}),
	} {
		if err := topicsLed(m, want); err == nil {
			t.Errorf("%s: topicsLed = nil", name)
		}
	}
}
