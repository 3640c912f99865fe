package main

// tenantproc.go runs workload 13's tenant A in a process of its own (the
// hidden subcommand floodTenantCmd), as a second tenant is a second
// client program: in kgbench's own process A's producers and consumer
// would share B's Go scheduler, garbage collector and buffers, and B's
// latencies would count A's client work, not the server's sharing.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// floodTenantCmd is the hidden subcommand that runs tenant A's flood
// against --addr with the parent's settings (its config as JSON in
// floodConfigEnv, the SASL password, never written out, in
// floodPasswordEnv), until its stdin closes; it then prints the bytes
// moved and the seconds it ran.
const (
	floodTenantCmd   = "flood-tenant-a"
	floodConfigEnv   = "KGBENCH_FLOOD_CONFIG"
	floodPasswordEnv = "KGBENCH_FLOOD_SASL_PASSWORD"
)

// runFloodTenant is floodTenantCmd's body: args are "--addr" and the
// address.
func runFloodTenant(args []string) error {
	if len(args) != 2 || args[0] != "--addr" {
		return fmt.Errorf("%s: usage: --addr host:port", floodTenantCmd)
	}
	var cfg config
	if err := json.Unmarshal([]byte(os.Getenv(floodConfigEnv)), &cfg); err != nil {
		return fmt.Errorf("%s: %s: %w", floodTenantCmd, floodConfigEnv, err)
	}
	cfg.Security.SASLPassword = os.Getenv(floodPasswordEnv)
	var err error
	if cfg.securityOpts, err = cfg.Security.clientOpts(); err != nil {
		return err
	}
	b := newBench(&cfg, &system{name: "kgateway", addr: args[1]})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // the parent closes it to stop the flood
		cancel()
	}()
	var moved floodCounts
	var wg sync.WaitGroup
	if err := b.startFlood(ctx, &wg, &moved); err != nil {
		cancel()
		return err
	}
	wg.Wait()
	fmt.Printf("%d %d %f\n", moved.produced.Load(), moved.fetched.Load(), time.Since(moved.start).Seconds())
	return nil
}

// floodProc is tenant A running in its own process.
type floodProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startFloodProc starts tenant A in a process of its own against the
// server b measures.
func (b *bench) startFloodProc() (*floodProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(b.cfg)
	if err != nil {
		return nil, err
	}
	// A tenant's clients run on machines of their own; here they share
	// two cores with B's client, so A's client runs at a lower CPU
	// priority (--tenant-a-nice) and its bursts of client work do not
	// count in B's latencies. Every thread of the process inherits it.
	args := []string{self, floodTenantCmd, "--addr", b.sys.addr}
	if n := b.cfg.TenantANice; n > 0 {
		nice, err := exec.LookPath("nice")
		if err != nil {
			return nil, fmt.Errorf("--tenant-a-nice %d: %w", n, err)
		}
		args = append([]string{nice, "-n", strconv.Itoa(n)}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), floodConfigEnv+"="+string(js), floodPasswordEnv+"="+b.cfg.Security.SASLPassword)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &floodProc{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}, nil
}

// stop ends the flood and returns what A moved: bytes produced and
// fetched, and for how long.
func (p *floodProc) stop() (produced, fetched int64, secs float64, err error) {
	p.stdin.Close()
	line, rerr := p.out.ReadString('\n')
	werr := p.cmd.Wait()
	if rerr != nil || werr != nil {
		return 0, 0, 0, fmt.Errorf("tenant A's process: %v %v", rerr, werr)
	}
	_, err = fmt.Sscanf(strings.TrimSpace(line), "%d %d %f", &produced, &fetched, &secs)
	return produced, fetched, secs, err
}
