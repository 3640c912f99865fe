// Command kgbench is kgateway's reproducible end-to-end benchmark.
//
// It starts each system under test on loopback with its own temporary data
// directory, drives every one with the same franz-go workloads, and prints a
// single table (system × workload) with MB/s, records/s and latency
// percentiles. The same results are written as JSON and as a PNG chart.
//
// Systems:
//
//	kgateway       this repository's server, built and run as a child process
//	kfake          franz-go's kfake, in memory, as a child process
//	kfake-durable  kfake with DataDir and SyncWrites (fsync per batch)
//
// Every client kgbench makes can use TLS and SASL (--security-protocol and
// the --tls-* and --sasl-* flags, security.go); the servers are started in
// plaintext unless --kgateway-args configures kgateway's listener.
//
// kfake runs as a child process (this binary re-executed with the hidden
// serve-kfake subcommand) so that every system pays for its own CPU and RSS
// in a process of its own, and the client side is identical for all.
//
// Invariants of the harness:
//
//  1. It never fails on numbers: a system or workload that errors gets an
//     error cell and the run continues with the next one. A row whose APIs
//     the server does not advertise is "unsupported", not an error.
//  2. Systems run one after another, never concurrently, so they do not
//     compete for the machine's cores.
//  3. Every workload is bounded by --workload-timeout, so a hung server costs
//     at most that long per workload.
//  4. Every system starts fresh, with a new data directory, in every round,
//     and no system runs first in every round (--rounds rotates the order).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// errConfig prefixes every configuration problem.
var errConfig = errors.New("kgbench: invalid config")

// config holds every knob of a run; flags mirror it in kebab-case.
type config struct {
	Systems             []string      `json:"systems"`               // systems to run, in order
	Workloads           []int         `json:"workloads"`             // workload numbers to run (1..15)
	Records             int           `json:"records"`               // N: records in workloads 1–3
	RecordSize          int           `json:"record_size"`           // bytes per record value
	Linger              time.Duration `json:"linger_ns"`             // producer linger
	LoadLinger          time.Duration `json:"load_linger_ns"`        // workload 4's producer linger
	Idempotent          bool          `json:"idempotent"`            // franz-go's default producer mode
	Compression         string        `json:"compression"`           // producer codec: none, gzip, snappy, lz4, zstd
	FetchPartitionBytes int32         `json:"fetch_part_bytes"`      // workload 3's consumer: max bytes per partition (0 = franz-go's 1 MiB)
	OfferedMBps         float64       `json:"offered_mbps"`          // workload 4 offered load
	Duration            time.Duration `json:"duration_ns"`           // workload 4 duration
	PartitionsScale     int           `json:"partitions_scale"`      // workload 5 total partitions
	TopicsScale         int           `json:"topics_scale"`          // workload 5 topics the partitions spread over
	BigBytes            int64         `json:"big_bytes"`             // workload 6 partition size
	Probes              int           `json:"probes"`                // samples per latency probe (workloads 5, 6, 7)
	SessionPartitions   int           `json:"session_partitions"`    // workload 7 partitions
	WorkloadTimeout     time.Duration `json:"workload_timeout_ns"`   // upper bound per workload
	StartTimeout        time.Duration `json:"start_timeout_ns"`      // upper bound to accept connections
	Out                 string        `json:"out"`                   // JSON results path
	Chart               string        `json:"chart"`                 // PNG chart path ("" = none)
	KgatewayBin         string        `json:"kgateway_bin"`          // prebuilt kgateway binary ("" = build)
	WorkDir             string        `json:"work_dir"`              // parent of the temporary data dirs
	WarmPageCache       int64         `json:"warm_page_cache_bytes"` // written and deleted before every workload (pagecache.go)
	KeepData            bool          `json:"keep_data"`             // leave data directories behind
	Rounds              int           `json:"rounds"`                // times the whole systems × workloads set runs
	DiskProbe           bool          `json:"disk_probe"`            // measure the work dir's disk before the systems
	KgatewayArgs        string        `json:"kgateway_args"`         // appended to kgateway's command line (strings.Fields)
	KfakeKeystore       string        `json:"kfake_keystore"`        // PEM key and chain: kfake serves TLS (with SSL and SASL_SSL)
	ServerProcs         int           `json:"server_procs"`          // GOMAXPROCS of every server process (0 = Go's default)
	ClientGCPercent     int           `json:"client_gc_percent"`     // GOGC of kgbench's own clients (the servers keep theirs)
	TxnRecords          int           `json:"txn_records"`           // workload 8 records per transaction
	TxnInterval         time.Duration `json:"txn_interval_ns"`       // workload 8 time between transaction starts (0 = back to back)
	IsolationPasses     int           `json:"isolation_passes"`      // workload 9 reads per isolation level
	RebalanceMembers    []int         `json:"rebalance_members"`     // workload 10 group sizes
	RebalancePartitions int           `json:"rebalance_partitions"`  // workload 10 topic partitions
	RebalanceProtocols  []string      `json:"rebalance_protocols"`   // workload 10 rows run: eager, coop, 848 (empty = all)
	RebalanceTrace      time.Duration `json:"rebalance_trace_ns"`    // workload 10: report a case unbalanced this long (0 = never)
	GroupHeartbeat      time.Duration `json:"group_heartbeat_ns"`    // workload 10 classic heartbeat; kfake's KIP-848 and share heartbeat
	ShareRecords        int           `json:"share_records"`         // workload 11 records per topic
	ShareMembers        []int         `json:"share_members"`         // workload 11 member counts on one partition
	SharePartitions     int           `json:"share_partitions"`      // workload 11 partitions (and members) of the last row
	PerfRecords         int           `json:"perf_records"`          // workload 12 records (0 = Records)
	TenantMBps          float64       `json:"tenant_mbps"`           // workload 13 tenant B's offered load
	TenantQuotaMBps     float64       `json:"tenant_quota_mbps"`     // workload 13 tenant A's quota each way
	TenantANice         int           `json:"tenant_a_nice"`         // workload 13 tenant A's client process runs at this nice value
	Security            security      `json:"security"`              // client TLS and SASL (security.go)
	Render              string        `json:"-"`                     // re-render this JSON instead of running
	ClientStats         bool          `json:"-"`                     // print the clients' traffic per workload (clientstats.go)
	CPUProfile          string        `json:"-"`                     // CPU profile path prefix for kgbench itself ("" = none)
	Timeline            bool          `json:"-"`                     // print workloads 1 and 3's response timeline (timeline.go)

	// securityOpts are Security's franz-go options, built once by
	// parseFlags (the files they name are read then).
	securityOpts []kgo.Opt
}

// allSystems is the default --systems list.
var allSystems = []string{"kgateway", "kfake", "kfake-durable"}

// Validate reports every problem at once.
func (c *config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{errConfig}, a...)...))
	}
	c.Security.normalize()
	for _, s := range c.Systems {
		if !knownSystem(s) {
			bad("unknown system %q (want one of %s)", s, strings.Join(append(append(slices.Clone(allSystems), kafkaSystems...), clusterSystem), ","))
		}
	}
	for _, w := range c.Workloads {
		if w < 1 || w > len(workloadNames) {
			bad("unknown workload %d (want 1..%d)", w, len(workloadNames))
		}
	}
	if c.Records < 4 {
		bad("--records must be >= 4, got %d", c.Records)
	}
	if c.RecordSize < 16 {
		bad("--record-size must be >= 16 (the send time is embedded), got %d", c.RecordSize)
	}
	if c.OfferedMBps <= 0 || c.Duration <= 0 {
		bad("--rate and --duration must be positive")
	}
	if c.TenantMBps <= 0 || c.TenantQuotaMBps <= 0 {
		bad("--tenant-rate and --tenant-quota must be positive")
	}
	if c.TenantANice < 0 || c.TenantANice > 19 {
		bad("--tenant-a-nice must be 0..19, got %d", c.TenantANice)
	}
	if c.PartitionsScale < 1 || c.TopicsScale < 1 || c.TopicsScale > c.PartitionsScale {
		bad("need 1 <= --topics-scale <= --partitions-scale")
	}
	if c.BigBytes < int64(c.RecordSize) {
		bad("--big-bytes must hold at least one record")
	}
	if c.SessionPartitions < 1 {
		bad("--session-partitions %d must be positive", c.SessionPartitions)
	}
	if _, ok := compressionCodecs[c.Compression]; !ok && c.Compression != "" {
		bad("unknown --compression %q (want none, gzip, snappy, lz4 or zstd)", c.Compression)
	}
	if c.PerfRecords < 0 {
		bad("--perf-records must be >= 0, got %d", c.PerfRecords)
	}
	if c.Probes < 1 {
		bad("--probes must be >= 1")
	}
	if c.Rounds < 1 {
		bad("--rounds must be >= 1, got %d", c.Rounds)
	}
	if c.ClientGCPercent < 1 {
		bad("--client-gc-percent must be >= 1, got %d", c.ClientGCPercent)
	}
	if c.ServerProcs < 0 {
		bad("--server-procs must be >= 0, got %d", c.ServerProcs)
	}
	if c.TxnRecords < 1 {
		bad("--txn-records must be >= 1, got %d", c.TxnRecords)
	}
	if c.TxnInterval < 0 {
		bad("--txn-interval must be >= 0, got %s", c.TxnInterval)
	}
	if c.IsolationPasses < 1 {
		bad("--isolation-passes must be >= 1, got %d", c.IsolationPasses)
	}
	if len(c.RebalanceMembers) == 0 || slices.Min(c.RebalanceMembers) < 1 || c.RebalancePartitions < 1 {
		bad("--rebalance-members (at least one) and --rebalance-partitions must be positive")
	}
	for _, p := range c.RebalanceProtocols {
		if !slices.ContainsFunc(groupProtocols, func(g groupProtocol) bool { return g.short == p }) {
			bad("--rebalance-protocols: unknown row %q (eager, coop or 848)", p)
		}
	}
	if c.RebalanceTrace < 0 {
		bad("--rebalance-trace must be >= 0, got %s", c.RebalanceTrace)
	}
	if c.GroupHeartbeat <= 0 || c.GroupHeartbeat >= classicSession {
		bad("--group-heartbeat must be positive and below the %s session timeout, got %s", classicSession, c.GroupHeartbeat)
	}
	if c.ShareRecords < 1 || len(c.ShareMembers) == 0 || slices.Min(c.ShareMembers) < 1 {
		bad("--share-records and --share-members (at least one) must be positive")
	}
	if c.SharePartitions < 2 {
		bad("--share-partitions must be >= 2 (one partition is the other rows'), got %d", c.SharePartitions)
	}
	c.Security.validate(bad)
	for _, s := range c.Systems {
		if isKafka(s) && c.Security.Protocol != "PLAINTEXT" {
			bad("system %s serves PLAINTEXT only, not --security-protocol %s", s, c.Security.Protocol)
		}
	}
	return errors.Join(errs...)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == floodTenantCmd {
		if err := runFloodTenant(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == serveKfakeCmd {
		if err := serveKfake(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(run(cfg))
}

// defaultClientGCPercent is the clients' GOGC. kgbench's clients run on the
// same CPUs as the server they measure, where a client on another machine
// would not: at Go's default of 100 the producers of workload 2 spend
// about a third of their CPU collecting and regrowing their request
// buffers (franz-go's pooled buffers are emptied by each collection), CPU
// the server under test then lacks. A heap allowed to grow to five times
// what is live (a few hundred MB here) collects a quarter as often. It
// applies to kgbench's process only: every system is measured with the
// same clients, and no server (kfake's child included) inherits it.
const defaultClientGCPercent = 400

// setClientGC sets the clients' GOGC (--client-gc-percent).
func setClientGC(cfg *config) {
	debug.SetGCPercent(cfg.ClientGCPercent)
}

// parseFlags turns the command line into a validated config.
func parseFlags(args []string) (*config, error) {
	fs := flag.NewFlagSet("kgbench", flag.ContinueOnError)
	var (
		c                           config
		systems, workloads, bigSize string
		rebalanceMembers, shareMem  string
		rebalanceProtocols          string
		rate                        float64
	)
	fs.StringVar(&systems, "systems", strings.Join(allSystems, ","), "comma-separated systems to run")
	fs.StringVar(&workloads, "workloads", "1,2,3,4,5,6,7,8,9,10,11", "comma-separated workload numbers to run (12, kafka-producer-perf-test, needs Java and Kafka's jars: make deps)")
	fs.IntVar(&c.Records, "records", 1_000_000, "records produced in workloads 1 and 2 (and consumed in 3)")
	fs.IntVar(&c.RecordSize, "record-size", 1024, "record value size in bytes")
	fs.DurationVar(&c.Linger, "linger", 5*time.Millisecond, "producer linger (workloads 1, 2, 6, 7)")
	fs.DurationVar(&c.LoadLinger, "load-linger", 0, "workload 4's producer linger: 0 so that ack latency is the server's, not the client's batching wait")
	fs.BoolVar(&c.Idempotent, "idempotent", true, "idempotent producer (franz-go's default)")
	fs.StringVar(&c.Compression, "compression", "none", "producer batch compression: none, gzip, snappy, lz4 or zstd (record values become compressible text)")
	fs.Func("fetch-partition-bytes", "workload 3's consumer: most bytes per partition per fetch (e.g. 8MiB; default franz-go's and Kafka's consumer's 1 MiB)", func(v string) error {
		n, err := parseBytes(v)
		if err != nil || n < 1024 || n > 1<<30 {
			return fmt.Errorf("want a size from 1KiB to 1GiB, got %q", v)
		}
		c.FetchPartitionBytes = int32(n)
		return nil
	})
	fs.Float64Var(&rate, "rate", 20, "workload 4 offered load in MB/s")
	fs.DurationVar(&c.Duration, "duration", 20*time.Second, "duration of workloads 4 and 8")
	fs.IntVar(&c.PartitionsScale, "partitions-scale", 10_000, "workload 5 total partitions")
	fs.IntVar(&c.TopicsScale, "topics-scale", 100, "workload 5 topics (capped at --partitions-scale)")
	fs.StringVar(&bigSize, "big-bytes", "5GB", "workload 6 partition size (e.g. 50MB, 5GB)")
	fs.IntVar(&c.Probes, "probes", 50, "samples per latency probe in workloads 5, 6 and 7")
	fs.IntVar(&c.SessionPartitions, "session-partitions", 1000, "workload 7 partitions (fetch sessions)")
	fs.DurationVar(&c.WorkloadTimeout, "workload-timeout", 10*time.Minute, "upper bound per workload")
	fs.DurationVar(&c.StartTimeout, "start-timeout", 3*time.Minute, "upper bound for a started system to accept connections (a build is not counted)")
	fs.StringVar(&c.Out, "out", "results.json", "JSON results path")
	fs.StringVar(&c.Chart, "chart", "results.png", "PNG chart path (empty for none)")
	fs.StringVar(&c.KgatewayBin, "kgateway-bin", "", "prebuilt kgateway binary (default: go build ./cmd/kgateway)")
	fs.StringVar(&c.WorkDir, "work-dir", "", "parent directory for temporary data dirs (default: $TMPDIR)")
	fs.BoolVar(&c.KeepData, "keep-data", false, "keep data directories after the run")
	fs.Int64Var(&c.WarmPageCache, "warm-page-cache", 1<<30, "bytes written unsynced beside each system's data and deleted before every workload, so that on a VM that hands free memory back to its host every system's page-cache writes take memory the guest just used (0: off; BENCHMARKS.md \"Produce CPU: the VM's first touch of page-cache memory\")")
	fs.IntVar(&c.ClientGCPercent, "client-gc-percent", defaultClientGCPercent, "GOGC of kgbench's own clients, which share the CPUs with the server under test (Go's default is 100); the server processes keep their own")
	fs.IntVar(&c.ServerProcs, "server-procs", 0, "GOMAXPROCS for every server process, the same for each system (0: Go's default, one per CPU)")
	fs.IntVar(&c.Rounds, "rounds", 1, "run every system × workload this many times, rotating the system order; the table shows medians")
	fs.BoolVar(&c.DiskProbe, "disk-probe", true, "measure fdatasync latency and synced write MB/s in --work-dir first")
	fs.StringVar(&c.KfakeKeystore, "kfake-keystore", "", "PEM file with a private key and certificate chain: kfake serves TLS with it, and with SASL its --sasl-user as a superuser, so that kfake runs beside a secured kgateway")
	fs.StringVar(&c.KgatewayArgs, "kgateway-args", "", "extra arguments appended to kgateway's command line, split on spaces (e.g. '--log-level warn')")
	fs.IntVar(&c.TxnRecords, "txn-records", 1000, "workload 8: records per transaction")
	fs.DurationVar(&c.TxnInterval, "txn-interval", 100*time.Millisecond, "workload 8: a transaction starts (and is committed) every this long; 0 runs them back to back")
	fs.IntVar(&c.IsolationPasses, "isolation-passes", 3, "workload 9: full reads per isolation level, alternating")
	fs.StringVar(&rebalanceMembers, "rebalance-members", "10,100", "workload 10: comma-separated group sizes; each joins at once, then one more member joins")
	fs.StringVar(&rebalanceProtocols, "rebalance-protocols", "eager,coop,848", "workload 10: comma-separated rows to run (eager, coop, 848); the others are reported as not selected")
	fs.DurationVar(&c.RebalanceTrace, "rebalance-trace", 0, "workload 10: keep each member's client log (info level) in memory and, when a case stays unbalanced this long, print to stderr what each member owns, its log and (KIP-848) the server's ConsumerGroupDescribe (0: off)")
	fs.IntVar(&c.RebalancePartitions, "rebalance-partitions", 100, "workload 10: partitions of the topic the groups consume")
	fs.DurationVar(&c.GroupHeartbeat, "group-heartbeat", 250*time.Millisecond, "workload 10's classic members' heartbeat interval; kfake is started with it as its KIP-848 and share-group heartbeat interval")
	fs.IntVar(&c.ShareRecords, "share-records", 200000, "workload 11: records in each of its two topics (about 240 commits a row at the default: enough for the ack p99 not to be a row's slowest commit)")
	fs.StringVar(&shareMem, "share-members", "1,4,16", "workload 11: comma-separated member counts of the one-partition rows")
	fs.IntVar(&c.SharePartitions, "share-partitions", 16, "workload 11: partitions, and members, of its last row")
	fs.IntVar(&c.PerfRecords, "perf-records", 0, "workload 12: records kafka-producer-perf-test sends (0: --records)")
	fs.Float64Var(&c.TenantMBps, "tenant-rate", 5, "workload 13: tenant B's offered load in MB/s (for --duration per phase)")
	fs.Float64Var(&c.TenantQuotaMBps, "tenant-quota", 10, "workload 13: tenant A's producer_byte_rate and consumer_byte_rate quota in MB/s")
	fs.IntVar(&c.TenantANice, "tenant-a-nice", 10, "workload 13: nice value of tenant A's client process (0: as kgbench), so that on a small machine A's client work does not delay B's client; the servers are untouched")
	sec := &c.Security
	fs.StringVar(&sec.Protocol, "security-protocol", "PLAINTEXT", "every client's security.protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")
	fs.StringVar(&sec.TLSCAFile, "tls-ca", "", "PEM file of the CAs the clients trust (default: the system's)")
	fs.StringVar(&sec.TLSCertFile, "tls-cert", "", "PEM client certificate chain for mTLS (with its key, or the key in --tls-key)")
	fs.StringVar(&sec.TLSKeyFile, "tls-key", "", "PEM key of --tls-cert (default: read from --tls-cert)")
	fs.StringVar(&sec.TLSServerName, "tls-server-name", "", "server name to verify (default: the dialed host, 127.0.0.1)")
	fs.StringVar(&sec.SASLMechanism, "sasl-mechanism", "", "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (with SASL_PLAINTEXT or SASL_SSL)")
	fs.StringVar(&sec.SASLUser, "sasl-user", "", "SASL user name")
	fs.StringVar(&sec.SASLPassword, "sasl-password", "", "SASL password (not written to --out; --sasl-password-file keeps it off the command line)")
	fs.StringVar(&sec.SASLPasswordFile, "sasl-password-file", "", "file whose first line is the SASL password")
	fs.BoolVar(&c.Timeline, "timeline", false, "print, for workloads 1 and 3, when each response of the measured client arrived after the clock started: the requests before the first Produce or Fetch answer, every gap over 5 ms, gap percentiles and MB/s per 50 ms, to stderr")
	fs.BoolVar(&c.ClientStats, "client-stats", false, "print, per single-phase workload (1-8, 14, 15), what the clients sent and received (requests by key, bytes, batches and records per Produce request, requests in flight) to stderr")
	fs.StringVar(&c.CPUProfile, "cpu-profile", "", "write a CPU profile of kgbench (the clients) per system and single-phase workload (1-8, 12, 14, 15) to <this>-<system>-w<N>.pprof")
	fs.StringVar(&c.Render, "render", "", "print the table and draw --chart from an earlier --out JSON; runs nothing")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.OfferedMBps = rate
	c.Systems = splitList(systems)
	var err error
	if c.Workloads, err = parseInts(workloads); err != nil {
		return nil, fmt.Errorf("%w: --workloads: %v", errConfig, err)
	}
	c.RebalanceProtocols = splitList(rebalanceProtocols)
	if c.RebalanceMembers, err = parseInts(rebalanceMembers); err != nil {
		return nil, fmt.Errorf("%w: --rebalance-members: %v", errConfig, err)
	}
	if c.ShareMembers, err = parseInts(shareMem); err != nil {
		return nil, fmt.Errorf("%w: --share-members: %v", errConfig, err)
	}
	if c.BigBytes, err = parseBytes(bigSize); err != nil {
		return nil, fmt.Errorf("%w: --big-bytes: %v", errConfig, err)
	}
	c.TopicsScale = min(c.TopicsScale, c.PartitionsScale)
	if err := c.Validate(); err != nil {
		return &c, err
	}
	if c.securityOpts, err = c.Security.clientOpts(); err != nil {
		return &c, fmt.Errorf("%w: %v", errConfig, err)
	}
	return &c, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// parseBytes accepts a plain byte count or a decimal/binary suffix:
// 50MB = 50e6, 50MiB = 50·2^20, 5GB = 5e9.
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToUpper(s))
	units := []struct {
		suffix string
		mult   float64
	}{
		{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"B", 1},
	}
	mult := 1.0
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return int64(f * mult), nil
}

// run benchmarks every system in turn, --rounds times, and writes the
// table, JSON and chart. The exit code is non-zero only when the harness
// itself could not work (e.g. no temp dir or an unwritable --out), never
// because of a number or a failing system (invariant 1).
func run(cfg *config) int {
	if cfg.Render != "" {
		return render(cfg)
	}
	setClientGC(cfg)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root, err := os.MkdirTemp(cfg.WorkDir, "kgbench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "kgbench:", err)
		return 1
	}
	if cfg.KeepData {
		fmt.Fprintln(os.Stderr, "== data directories and server logs are kept in", root)
	} else {
		defer os.RemoveAll(root)
	}
	rep := newReport(cfg)
	if cfg.DiskProbe {
		rep.Host.Disk = measureDisk(ctx, root)
	}
	rep.Results = newHarness(cfg, root).runRounds(ctx)
	rep.Summary = summarize(cfg.Systems, rep.Results)
	fmt.Println()
	printReport(os.Stdout, rep)
	code := 0
	if err := writeJSON(cfg.Out, rep); err != nil {
		fmt.Fprintln(os.Stderr, "kgbench: writing JSON:", err)
		code = 1
	}
	if err := writeChart(cfg.Chart, rep.Summary); err != nil {
		fmt.Fprintln(os.Stderr, "kgbench: writing chart:", err)
		code = 1
	}
	return code
}

// render re-prints the table and redraws the chart of an earlier run.
func render(cfg *config) int {
	rep, err := loadReport(cfg.Render)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kgbench:", err)
		return 1
	}
	printReport(os.Stdout, rep)
	if err := writeChart(cfg.Chart, rep.Summary); err != nil {
		fmt.Fprintln(os.Stderr, "kgbench: writing chart:", err)
		return 1
	}
	return 0
}
