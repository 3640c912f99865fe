package main

// kafka.go starts Apache Kafka as a system under test: `kafka` (Kafka's
// defaults, which leave flushing to the OS) and `kafka-fsync`
// (log.flush.interval.messages=1, an fsync per append: the durability
// kgateway and kfake-durable give every acknowledgement).
//
// The broker is started by tools/apachekafka, a command of the kgateway
// module built once per run like kgateway itself. It formats a log dir
// under --dir, starts one KRaft broker+controller JVM with the heap and GC
// flags of Kafka's start scripts, and prints one line,
// "bootstrap ADDR pid PID", once the broker serves; SIGTERM shuts the
// broker down cleanly. The wrapper chooses the port, so the address comes
// from that line, not from freeLoopbackAddr. The JVM is the wrapper's
// child in a process group of its own: its pid, not the wrapper's, is the
// one CPU time and RSS are read for, and a watchdog stops the wrapper when
// the JVM dies, so that a crashed broker ends its workload as a crashed
// kgateway does.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// kafkaSystems are the Apache Kafka systems; they are not in the default
// --systems (they need Java and Kafka's jars, `make deps`).
var kafkaSystems = []string{"kafka", "kafka-fsync"}

// kafkaStopTimeout bounds the wrapper's clean shutdown: it gives the
// broker 30 s (test/apachekafka StopTimeout) before it kills it.
const kafkaStopTimeout = 45 * time.Second

// envKafkaClasspath overrides test/jvm/target/classpath.txt, as for
// test/apachekafka.
const envKafkaClasspath = "KGW_KAFKA_CLASSPATH"

var errBootstrapLine = errors.New("kgbench: not a bootstrap line")

func isKafka(name string) bool {
	for _, k := range kafkaSystems {
		if k == name {
			return true
		}
	}
	return false
}

// bootstrapLine matches tools/apachekafka's one line of output.
var bootstrapLine = regexp.MustCompile(`^bootstrap (\S+:\d+) pid (\d+)$`)

// parseBootstrapLine reads "bootstrap 127.0.0.1:PORT pid PID".
func parseBootstrapLine(line string) (addr string, pid int, err error) {
	m := bootstrapLine.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return "", 0, fmt.Errorf("%w: %q", errBootstrapLine, line)
	}
	pid, err = strconv.Atoi(m[2])
	if err != nil || pid <= 0 {
		return "", 0, fmt.Errorf("%w: bad pid in %q", errBootstrapLine, line)
	}
	return m[1], pid, nil
}

// kafkaArgs are tools/apachekafka's flags for a system.
func kafkaArgs(name, dataDir string) []string {
	args := []string{"--dir", dataDir}
	if name == "kafka-fsync" {
		args = append(args, "--fsync")
	}
	return args
}

// startKafka launches tools/apachekafka for name and waits for its
// bootstrap line (within --start-timeout).
func startKafka(ctx context.Context, h *harness, dir, name string) (*system, error) {
	bin, err := h.apacheKafkaBin(ctx)
	if err != nil {
		return nil, err
	}
	cp, err := kafkaClasspath()
	if err != nil {
		return nil, err
	}
	s := &system{
		name:        name,
		dataDir:     filepath.Join(dir, name+"-data"),
		logPath:     filepath.Join(dir, name+".log"),
		exited:      make(chan struct{}),
		stopTimeout: kafkaStopTimeout,
	}
	// The broker's own output is test/apachekafka's broker.log in --dir.
	s.serverLog = filepath.Join(s.dataDir, "broker.log")
	if err := os.MkdirAll(s.dataDir, 0o755); err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	env := append(os.Environ(), envKafkaClasspath+"="+cp)
	if err := s.launchWith(bin, kafkaArgs(name, s.dataDir), env, pw); err != nil {
		return nil, err
	}
	go func() { <-s.exited; pw.Close() }()
	// The scanner hands over the first bootstrap line only (other output
	// is in the log), then drains the pipe so the wrapper never blocks.
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if _, _, err := parseBootstrapLine(sc.Text()); err == nil {
				lines <- sc.Text()
				break
			}
		}
		io.Copy(io.Discard, pr)
	}()
	ctx, cancel := context.WithTimeout(ctx, h.cfg.StartTimeout)
	defer cancel()
	for {
		select {
		case line := <-lines:
			s.addr, s.pid, _ = parseBootstrapLine(line)
			go s.watchJVM()
			if err := s.waitReady(ctx, h.cfg.StartTimeout); err != nil {
				s.stop()
				return nil, err
			}
			return s, nil
		case <-s.exited:
			return nil, s.checkAlive()
		case <-ctx.Done():
			s.stop()
			return nil, fmt.Errorf("%w: %s printed no bootstrap line within %s", errStartTimeout, name, h.cfg.StartTimeout)
		}
	}
}

// watchJVM stops the wrapper once the JVM has exited (the wrapper itself
// only waits for a signal), so that s.exited closes for a dead broker.
func (s *system) watchJVM() {
	for {
		select {
		case <-s.exited:
			return
		case <-time.After(250 * time.Millisecond):
		}
		if !processAlive(s.pid) {
			s.jvmGone.Store(true)
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
			return
		}
	}
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(b[i+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// killJVM kills the broker's process group, for when the wrapper had to
// be killed and could not stop it.
func (s *system) killJVM() {
	if s.pid > 0 && processAlive(s.pid) {
		_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	}
}

// kafkaClasspath is the classpath of Kafka's jars: $KGW_KAFKA_CLASSPATH,
// or test/jvm/target/classpath.txt of the kgateway module (written by
// `make deps`), read once.
var kafkaClasspath = sync.OnceValues(readKafkaClasspath)

func readKafkaClasspath() (string, error) {
	if cp := os.Getenv(envKafkaClasspath); cp != "" {
		return cp, nil
	}
	dir, err := kgatewayRepoDir(context.Background())
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(dir, "test", "jvm", "target", "classpath.txt"))
	if err != nil {
		return "", fmt.Errorf("kgbench: Kafka's classpath (run `make deps`, or set %s): %w", envKafkaClasspath, err)
	}
	cp := strings.TrimSpace(string(b))
	if cp == "" {
		return "", fmt.Errorf("kgbench: %s is empty", filepath.Join(dir, "test", "jvm", "target", "classpath.txt"))
	}
	return cp, nil
}
