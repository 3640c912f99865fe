// Package apachekafka starts a real Apache Kafka broker (a single-node
// KRaft broker and controller in one process) from the jars Maven resolved
// for test/jvm, so that tests and benchmarks can hold kgateway's answers
// and speed beside Kafka's own.
//
// The broker runs as the shell scripts run it: `kafka.tools.StorageTool
// format` on a fresh log dir, then `kafka.Kafka server.properties`, with the
// heap and GC flags of kafka-server-start.sh and kafka-run-class.sh. It
// listens on 127.0.0.1 on ephemeral ports and stops with SIGTERM (a clean
// shutdown), then SIGKILL if it has not exited within StopTimeout.
package apachekafka

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Version is the Apache Kafka release the broker and tools come from; it is
// the kafka.version property of test/jvm/pom.xml (TestPomPin checks it).
const Version = "4.4.0"

// EnvClasspath names a classpath to use instead of test/jvm's
// target/classpath.txt.
const EnvClasspath = "KGW_KAFKA_CLASSPATH"

// HeapOpts and JVMOpts are what kafka-server-start.sh (KAFKA_HEAP_OPTS) and
// kafka-run-class.sh (KAFKA_JVM_PERFORMANCE_OPTS) give the broker by
// default.
var (
	HeapOpts = []string{"-Xmx1G", "-Xms1G"}
	JVMOpts  = []string{"-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
		"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
		"-XX:MaxInlineLevel=15", "-Djava.awt.headless=true"}
)

// StopTimeout bounds a clean shutdown before the broker is killed.
const StopTimeout = 30 * time.Second

// Options shape a broker.
type Options struct {
	// Dir holds the broker's log dir, configs and output; empty: a new
	// temporary directory removed by Stop.
	Dir string
	// Fsync sets log.flush.interval.messages=1: an fsync per append, the
	// durability kgateway gives every acknowledgement. Without it the broker
	// runs with Kafka's defaults, which leave flushing to the OS.
	Fsync bool
	// Props are extra server.properties lines (key → value), applied last.
	Props map[string]string
	// Heap replaces HeapOpts when set (for tests that start several).
	Heap []string
	// Log receives the broker's stdout and stderr; nil: Dir/broker.log only.
	Log io.Writer
	// PlainUsers, when set, adds a SASL_PLAINTEXT listener on another
	// ephemeral port (Broker.SASLAddr) with the PLAIN mechanism, whose
	// JAAS config holds these users (name → password). Inter-broker and
	// controller traffic stay on PLAINTEXT.
	PlainUsers map[string]string
	// Classpath are extra classpath entries after Kafka's jars: plugins
	// the Props name (e.g. a metrics.reporters class).
	Classpath []string
}

// Broker is a running Apache Kafka broker.
type Broker struct {
	// Addr is the PLAINTEXT listener, host:port.
	Addr string
	// SASLAddr is the SASL_PLAINTEXT listener, host:port, when
	// Options.PlainUsers is set; "" otherwise.
	SASLAddr string
	// Dir is the broker's directory (log dir under data/).
	Dir string

	cmd     *exec.Cmd
	ownDir  bool
	exited  chan struct{}
	waitErr error
	stop    sync.Once
}

// Pid is the JVM's process id, for CPU and RSS from /proc.
func (b *Broker) Pid() int { return b.cmd.Process.Pid }

// Start formats a log dir and starts a broker on it, returning once the
// broker logs that it has started and its listener accepts connections.
// Port clashes (the ports are picked free, then bound by the JVM) are
// retried.
func Start(ctx context.Context, opts Options) (*Broker, error) {
	cp, err := Classpath()
	if err != nil {
		return nil, err
	}
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		b, err := start(ctx, cp, opts)
		if err == nil {
			return b, nil
		}
		last = err
		if !errors.Is(err, errPortInUse) {
			break
		}
	}
	return nil, last
}

var errPortInUse = errors.New("apachekafka: port in use")

func start(ctx context.Context, cp string, opts Options) (*Broker, error) {
	for _, e := range opts.Classpath {
		cp += string(os.PathListSeparator) + e
	}
	b := &Broker{Dir: opts.Dir, exited: make(chan struct{})}
	if b.Dir == "" {
		d, err := os.MkdirTemp("", "apachekafka-")
		if err != nil {
			return nil, err
		}
		b.Dir, b.ownDir = d, true
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	b.Addr = fmt.Sprintf("127.0.0.1:%d", ports[0])
	if len(opts.PlainUsers) > 0 {
		b.SASLAddr = fmt.Sprintf("127.0.0.1:%d", ports[2])
	}
	logDir := filepath.Join(b.Dir, "data")
	if err := os.RemoveAll(logDir); err != nil {
		return nil, err
	}
	props := filepath.Join(b.Dir, "server.properties")
	if err := os.WriteFile(props, []byte(serverProperties(b.Addr, b.SASLAddr, ports[1], logDir, opts)), 0o644); err != nil {
		return nil, err
	}
	log4j := filepath.Join(b.Dir, "log4j2.properties")
	if err := os.WriteFile(log4j, []byte(log4j2Config), 0o644); err != nil {
		return nil, err
	}
	if out, err := java(ctx, cp, log4j, nil, "kafka.tools.StorageTool", "format",
		"--cluster-id", clusterID(), "--config", props, "--ignore-formatted").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("apachekafka: format %s: %v\n%s", logDir, err, out)
	}
	heap := HeapOpts
	if opts.Heap != nil {
		heap = opts.Heap
	}
	b.cmd = java(context.Background(), cp, log4j, heap, "kafka.Kafka", props)
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logFile, err := os.Create(filepath.Join(b.Dir, "broker.log"))
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	out := io.Writer(logFile)
	if opts.Log != nil {
		out = io.MultiWriter(logFile, opts.Log)
	}
	b.cmd.Stdout = io.MultiWriter(out, pw)
	b.cmd.Stderr = b.cmd.Stdout
	if err := b.cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	go func() {
		b.waitErr = b.cmd.Wait()
		pw.Close()
		logFile.Close()
		close(b.exited)
	}()
	if err := b.awaitStarted(ctx, pr); err != nil {
		b.Stop()
		return nil, err
	}
	return b, nil
}

// awaitStarted reads the broker's output until it logs that it started or
// that it failed, and then until its listener accepts a connection.
func (b *Broker) awaitStarted(ctx context.Context, out io.Reader) error {
	started := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var sent bool
		for sc.Scan() {
			line := sc.Text()
			switch {
			case sent:
			case strings.Contains(line, "Kafka Server started"):
				started <- nil
				sent = true
			case strings.Contains(line, "Address already in use"):
				started <- errPortInUse
				sent = true
			}
		}
		if !sent {
			started <- fmt.Errorf("apachekafka: broker exited before it started (see %s)", filepath.Join(b.Dir, "broker.log"))
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case err := <-started:
		if err != nil {
			return err
		}
	case <-ctx.Done():
		return fmt.Errorf("apachekafka: waiting for the broker to start: %w", ctx.Err())
	}
	for {
		c, err := net.DialTimeout("tcp", b.Addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("apachekafka: dial %s: %w", b.Addr, ctx.Err())
		case <-b.exited:
			return fmt.Errorf("apachekafka: broker exited: %v", b.waitErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop shuts the broker down cleanly (SIGTERM), kills it after StopTimeout,
// and removes its directory if Start made it.
func (b *Broker) Stop() error {
	var err error
	b.stop.Do(func() {
		if b.cmd != nil && b.cmd.Process != nil {
			syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-b.exited:
			case <-time.After(StopTimeout):
				syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
				<-b.exited
				err = fmt.Errorf("apachekafka: broker did not stop within %v; killed", StopTimeout)
			}
		}
		if b.ownDir {
			os.RemoveAll(b.Dir)
		}
	})
	return err
}

// Kill stops the broker at once (SIGKILL), as a crash would.
func (b *Broker) Kill() {
	if b.cmd != nil && b.cmd.Process != nil {
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.exited
	}
}

func java(ctx context.Context, cp, log4j string, heap []string, main string, args ...string) *exec.Cmd {
	argv := append([]string{}, heap...)
	argv = append(argv, JVMOpts...)
	argv = append(argv, "-Dlog4j2.configurationFile="+log4j, "-cp", cp, main)
	argv = append(argv, args...)
	return exec.CommandContext(ctx, "java", argv...)
}

// serverProperties is the config/server.properties Kafka ships for a
// combined broker and controller (replication factors of one), on the given
// ports; everything else is Kafka's default. A non-empty saslAddr adds a
// SASL_PLAINTEXT listener (PLAIN, opts.PlainUsers) there.
func serverProperties(addr, saslAddr string, controllerPort int, logDir string, opts Options) string {
	p := map[string]string{
		"process.roles":                                    "broker,controller",
		"node.id":                                          "1",
		"controller.quorum.voters":                         fmt.Sprintf("1@127.0.0.1:%d", controllerPort),
		"listeners":                                        fmt.Sprintf("PLAINTEXT://%s,CONTROLLER://127.0.0.1:%d", addr, controllerPort),
		"advertised.listeners":                             "PLAINTEXT://" + addr,
		"inter.broker.listener.name":                       "PLAINTEXT",
		"controller.listener.names":                        "CONTROLLER",
		"listener.security.protocol.map":                   "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
		"num.network.threads":                              "3",
		"num.io.threads":                                   "8",
		"socket.send.buffer.bytes":                         "102400",
		"socket.receive.buffer.bytes":                      "102400",
		"socket.request.max.bytes":                         "104857600",
		"log.dirs":                                         logDir,
		"num.partitions":                                   "1",
		"num.recovery.threads.per.data.dir":                "1",
		"offsets.topic.replication.factor":                 "1",
		"share.coordinator.state.topic.replication.factor": "1",
		"share.coordinator.state.topic.min.isr":            "1",
		"transaction.state.log.replication.factor":         "1",
		"transaction.state.log.min.isr":                    "1",
		"log.retention.hours":                              "168",
		"log.segment.bytes":                                "1073741824",
		"log.retention.check.interval.ms":                  "300000",
	}
	if opts.Fsync {
		p["log.flush.interval.messages"] = "1"
	}
	if saslAddr != "" {
		p["listeners"] += ",SASL_PLAINTEXT://" + saslAddr
		p["advertised.listeners"] += ",SASL_PLAINTEXT://" + saslAddr
		p["sasl.enabled.mechanisms"] = "PLAIN"
		p["listener.name.sasl_plaintext.plain.sasl.jaas.config"] = plainJAAS(opts.PlainUsers)
	}
	for k, v := range opts.Props {
		p[k] = v
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s=%s\n", k, p[k])
	}
	return sb.String()
}

const log4j2Config = `status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRefs = stdout
rootLogger.appenderRef.stdout.ref = STDOUT
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.state.name = state.change.logger
logger.state.level = WARN
logger.apache.name = org.apache.kafka
logger.apache.level = WARN
logger.raftserver.name = kafka.server.KafkaRaftServer
logger.raftserver.level = INFO
`

// plainJAAS is the JAAS line of a PLAIN login module holding users, in
// name order (a properties value, one line).
func plainJAAS(users map[string]string) string {
	names := make([]string, 0, len(users))
	for n := range users {
		names = append(names, n)
	}
	sort.Strings(names)
	var sb strings.Builder
	sb.WriteString("org.apache.kafka.common.security.plain.PlainLoginModule required")
	for _, n := range names {
		fmt.Fprintf(&sb, " user_%s=%q", n, users[n])
	}
	sb.WriteString(";")
	return sb.String()
}

// clusterID is a random cluster id in Kafka's form: a type-4 UUID in
// URL-safe base64 without padding.
func clusterID() string {
	for {
		var u [16]byte
		rand.Read(u[:])
		u[6] = u[6]&0x0f | 0x40
		u[8] = u[8]&0x3f | 0x80
		// One id in 64 starts with '-', which the storage tool's
		// argument parser reads as an option (Kafka's Uuid.randomUuid
		// draws again for the same reason).
		if id := base64.RawURLEncoding.EncodeToString(u[:]); id[0] != '-' {
			return id
		}
	}
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
