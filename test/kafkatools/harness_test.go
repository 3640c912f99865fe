package kafkatools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kgateway/kgateway/test/apachekafka"
	"github.com/kgateway/kgateway/test/kgbin"
)

// Both brokers run with the built-in authorizer on their PLAINTEXT listener
// and User:ANONYMOUS (every unauthenticated client) a super user, so that
// kafka-acls has an authorizer to talk to while every other tool is allowed
// everything.
const (
	authorizerClass = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
	superUser       = "User:ANONYMOUS"
	// nodeID is both brokers' node.id, so that --entity-name of brokers and
	// the ids the tools print need no translation.
	nodeID = "1"
)

// target is one broker the tools run against.
type target struct {
	name string // "kafka" or "kgateway"
	addr string // host:port of its PLAINTEXT listener
}

// startKgateway runs the kgateway binary on an ephemeral port over a
// temporary data dir with the authorizer on, and waits for its "ready" log
// line, which names the address. The process is killed when the test ends.
func startKgateway(t *testing.T) target {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "kgateway.properties")
	props := "listen=127.0.0.1:0\n" +
		"data.dir=" + filepath.Join(dir, "data") + "\n" +
		"node.id=" + nodeID + "\n" +
		"metrics.addr=\n" +
		"authorizer.class.name=" + authorizerClass + "\n" +
		"super.users=" + superUser + "\n"
	if err := os.WriteFile(conf, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(kgbin.Path(t), "--config", conf)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "kgateway.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var line struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "ready" {
				ready <- line.Addr
			}
			logFile.Write(append(sc.Bytes(), '\n'))
		}
		done <- cmd.Wait()
		logFile.Close()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	select {
	case addr := <-ready:
		return target{name: "kgateway", addr: addr}
	case err := <-done:
		b, _ := os.ReadFile(logFile.Name())
		t.Fatalf("kgateway exited before ready: %v\n%s", err, b)
	case <-time.After(60 * time.Second):
		t.Fatal("kgateway: no ready line within 60s")
	}
	return target{}
}

// startKafka starts an Apache Kafka broker with the same authorizer and
// super user; it is stopped when the test ends.
func startKafka(t *testing.T) target {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := apachekafka.Start(ctx, apachekafka.Options{
		Heap: []string{"-Xmx512m", "-Xms512m"},
		Props: map[string]string{
			"authorizer.class.name": authorizerClass,
			"super.users":           superUser,
		},
	})
	if err != nil {
		t.Fatalf("start Apache Kafka: %v", err)
	}
	t.Cleanup(func() { b.Stop() })
	return target{name: "kafka", addr: b.Addr}
}

// toolJVM are the JVM flags of every tool: a small heap, and the quickest
// start (tools run for a second or two, so the C2 compiler never pays).
var toolJVM = []string{"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Xlog:disable",
	"-Djava.awt.headless=true"}

// toolLog4j is what kafka-run-class.sh gives tools (config/tools-log4j2.yaml):
// warnings and errors on stderr.
const toolLog4j = `status = error
appender.stderr.type = Console
appender.stderr.name = STDERR
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.stderr.ref = STDERR
`

// tools runs Kafka's command-line tools from the jars of
// apachekafka.Classpath().
type tools struct {
	cp    string
	log4j string
	dir   string
	// archive is a class-data-sharing archive of the classes a tool loads
	// (built by buildArchive): it takes a tool's JVM start from ~1 s of
	// CPU to ~0.3 s. Empty: none.
	archive string
}

// buildArchive runs one tool against addr with the JVM told to dump the
// classes it loaded into an archive that every later run maps. A failure
// only costs speed: the runs go without it.
func (tl *tools) buildArchive(t *testing.T, addr string) {
	jsa := filepath.Join(tl.dir, "tools.jsa")
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := tl.command(ctx, topicCommand, "--bootstrap-server", addr, "--list")
	cmd.Args = append(cmd.Args[:1], append([]string{"-XX:ArchiveClassesAtExit=" + jsa}, cmd.Args[1:]...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("no class-data archive for the tools (they start slower): %v\n%s", err, out)
		return
	}
	if _, err := os.Stat(jsa); err == nil {
		tl.archive = jsa
	}
}

func newTools(t *testing.T) *tools {
	t.Helper()
	cp, err := apachekafka.Classpath()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log4j := filepath.Join(dir, "tools-log4j2.properties")
	if err := os.WriteFile(log4j, []byte(toolLog4j), 0o644); err != nil {
		t.Fatal(err)
	}
	return &tools{cp: cp, log4j: log4j, dir: dir}
}

// result is what one run of a tool did.
type result struct {
	stdout, stderr string
	exit           int // -1: killed or not started
}

// toolTimeout bounds one tool run.
const toolTimeout = 2 * time.Minute

// command is the JVM of one tool run: main class and arguments, as the
// tool's bin/*.sh script runs it through kafka-run-class.sh.
func (tl *tools) command(ctx context.Context, main string, args ...string) *exec.Cmd {
	argv := append([]string{}, toolJVM...)
	if tl.archive != "" {
		argv = append(argv, "-XX:SharedArchiveFile="+tl.archive)
	}
	argv = append(argv, "-Dlog4j2.configurationFile="+tl.log4j, "-cp", tl.cp, main)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, "java", argv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// run runs one tool to its end.
func (tl *tools) run(main string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := tl.command(ctx, main, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
	default:
		r.exit, r.stderr = -1, r.stderr+err.Error()
	}
	if ctx.Err() != nil {
		r.stderr += fmt.Sprintf("\n(killed after %v)", toolTimeout)
	}
	return r
}

// both runs the same tool against each target at once; args is called with
// each target's address.
func (tl *tools) both(targets []target, main string, args func(addr string) []string) []result {
	out := make([]result, len(targets))
	var wg sync.WaitGroup
	for i, tg := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = tl.run(main, args(tg.addr)...)
		}()
	}
	wg.Wait()
	return out
}

// running is a tool started in the background.
type running struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
	lines  chan struct{} // a token per stdout line
	done   chan struct{}
	exit   int
	once   sync.Once
}

// start runs a tool in the background; stop ends it.
func (tl *tools) start(main string, args ...string) (*running, error) {
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	r := &running{cancel: cancel, lines: make(chan struct{}, 1<<16), done: make(chan struct{})}
	r.cmd = tl.command(ctx, main, args...)
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	r.cmd.Stderr = &lockedWriter{mu: &r.mu, w: &r.stderr}
	if err := r.cmd.Start(); err != nil {
		cancel()
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			r.mu.Lock()
			r.stdout.Write(append(sc.Bytes(), '\n'))
			r.mu.Unlock()
			r.lines <- struct{}{}
		}
		err := r.cmd.Wait()
		var ee *exec.ExitError
		r.mu.Lock()
		switch {
		case err == nil:
		case errors.As(err, &ee):
			r.exit = ee.ExitCode()
		default:
			r.exit = -1
		}
		r.mu.Unlock()
		close(r.done)
	}()
	return r, nil
}

// awaitLines waits until the tool has printed n lines on stdout.
func (r *running) awaitLines(n int, timeout time.Duration) error {
	deadline := time.After(timeout)
	for i := 0; i < n; i++ {
		select {
		case <-r.lines:
		case <-r.done:
			// lines printed before the exit are already counted in r.lines
			select {
			case <-r.lines:
				continue
			default:
			}
			return fmt.Errorf("exited (%d) after %d of %d lines:\n%s", r.exit, i, n, r.result().stderr)
		case <-deadline:
			return fmt.Errorf("%d of %d lines after %v:\n%s", i, n, timeout, r.result().stderr)
		}
	}
	return nil
}

// stop ends the tool as Ctrl-C would (SIGTERM: the JVM's shutdown hooks
// close its clients, which leave their groups), killing it if it has not
// exited within a minute.
func (r *running) stop() error {
	var err error
	r.once.Do(func() {
		defer r.cancel()
		syscall.Kill(-r.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-r.done:
		case <-time.After(time.Minute):
			syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
			<-r.done
			err = errors.New("did not exit within a minute of SIGTERM; killed")
		}
	})
	return err
}

// result is what a stopped tool printed. A JVM ended by SIGTERM exits 143;
// that is the tool's normal end here, so it counts as 0.
func (r *running) result() result {
	r.mu.Lock()
	defer r.mu.Unlock()
	exit := r.exit
	if exit == 128+int(syscall.SIGTERM) {
		exit = 0
	}
	return result{stdout: r.stdout.String(), stderr: r.stderr.String(), exit: exit}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
