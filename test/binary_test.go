package test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/kgateway/kgateway/test/kgbin"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kgatewayBinary is cmd/kgateway, built once per test run.
func kgatewayBinary(t *testing.T) string { return kgbin.Path(t) }

// proc is a running kgateway process.
type proc struct {
	cmd    *exec.Cmd
	addr   string
	stderr *bytes.Buffer // log lines after "ready"
	done   chan error
}

// startBinary runs kgateway on an ephemeral port over dir and waits for its
// "ready" log line, which names the address.
func startBinary(t *testing.T, dir string, extra ...string) *proc {
	t.Helper()
	return startBinaryEnv(t, dir, nil, extra...)
}

// startBinaryEnv is startBinary with env added to the process's
// environment.
func startBinaryEnv(t *testing.T, dir string, env []string, extra ...string) *proc {
	t.Helper()
	// No initial rebalance delay (Kafka's 3 s default): classic groups in
	// these tests rebalance at once.
	args := append([]string{"--listen", "127.0.0.1:0", "--data-dir", dir, "--group-initial-rebalance-delay-ms", "0"}, extra...)
	cmd := exec.Command(kgatewayBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: new(bytes.Buffer), done: make(chan error, 1)}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	ready := make(chan string, 1)
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			var line struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "ready" {
				ready <- line.Addr
			}
			mu.Lock()
			p.stderr.Write(append(sc.Bytes(), '\n'))
			mu.Unlock()
		}
		p.done <- cmd.Wait()
	}()
	ctx := testCtx(t)
	select {
	case p.addr = <-ready:
	case err := <-p.done:
		t.Fatalf("kgateway exited before ready: %v\n%s", err, p.stderr)
	case <-ctx.Done():
		t.Fatal("kgateway not ready before the deadline")
	}
	return p
}

// stop sends SIGTERM and expects a clean exit.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("kgateway exit after SIGTERM: %v", err)
		}
	case <-testCtx(t).Done():
		t.Fatal("kgateway did not exit after SIGTERM")
	}
}

// The binary serves real clients, stops cleanly on SIGTERM, and a restart
// on the same data dir has everything.
func TestBinaryServeSIGTERMRestart(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, dir, "--num-partitions", "2")
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	want := records("bin", 30)
	if err := cl.ProduceSync(testCtx(t), want...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	if out := kcat(t, p.addr, "", "-L"); !strings.Contains(out, `topic "bin" with 2 partitions`) {
		t.Fatalf("kcat -L:\n%s", out)
	}
	p.stop(t)

	p = startBinary(t, dir)
	g := &gateway{t: t, addr: p.addr}
	sameRecords(t, want, consumeN(t, g, "bin", len(want)))
	p.stop(t)
}

// Bad flags exit 2 and name every problem.
func TestBinaryRejectsBadFlags(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	out, err := exec.CommandContext(ctx, kgatewayBinary(t), "--num-partitions", "0", "--log-level", "loud", "--max-request-bytes", "-1").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v\n%s", err, out)
	}
	for _, want := range []string{"--num-partitions", "--log-level", "--max-request-bytes"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
