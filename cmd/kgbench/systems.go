package main

// systems.go starts and stops the systems under test. Every system is a
// child process listening on 127.0.0.1 with a data directory of its own, so
// RSS is read from /proc/<pid>/status and no system's CPU is billed to the
// client side of the harness.

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// serveKfakeCmd is the hidden subcommand that runs kfake in this process.
const serveKfakeCmd = "serve-kfake"

var (
	errSystemExited = errors.New("kgbench: system exited")
	errStartTimeout = errors.New("kgbench: system did not accept connections in time")
	errNoProcess    = errors.New("kgbench: system has no process of its own")
)

// system is one running server under test.
type system struct {
	name    string
	addr    string // host:port the server listens on
	dataDir string
	logPath string // the child's stdout+stderr
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the child has exited
	exitErr error         // valid once exited is closed
	// pid is the process that serves, when it is not cmd's own (Apache
	// Kafka's JVM under tools/apachekafka): CPU time and RSS are its.
	pid int
	// serverLog is the server's own log when it is not the child's
	// output (logPath); its tail explains a crash.
	serverLog string
	// stopTimeout bounds a clean stop before SIGKILL (0: 10 s).
	stopTimeout time.Duration
	jvmGone     atomic.Bool // watchJVM saw the JVM exit
	// peers are the other processes of a composite system (cluster.go):
	// they stop with it, and its CPU time and RSS are theirs too.
	peers []*system
}

func knownSystem(name string) bool {
	return slices.Contains(allSystems, name) || isKafka(name) || isCluster(name)
}

// procPid is the process whose /proc figures are the server's.
func (s *system) procPid() int {
	if s.pid > 0 {
		return s.pid
	}
	return s.cmd.Process.Pid
}

// startSystem builds (if needed) and launches one system with its data
// directory and log under dir, and waits until its port accepts
// connections.
func startSystem(ctx context.Context, h *harness, dir, name string) (*system, error) {
	if isKafka(name) {
		return startKafka(ctx, h, dir, name)
	}
	if isCluster(name) {
		return startCluster(ctx, h, dir, name)
	}
	bin, lead, err := systemCommand(ctx, h, name)
	if err != nil {
		return nil, err
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	s := &system{
		name:    name,
		addr:    addr,
		dataDir: filepath.Join(dir, name+"-data"),
		logPath: filepath.Join(dir, name+".log"),
		exited:  make(chan struct{}),
	}
	if err := os.MkdirAll(s.dataDir, 0o755); err != nil {
		return nil, err
	}
	if name == "kgateway" {
		if err := addSASLUser(ctx, bin, s.dataDir, &h.cfg.Security); err != nil {
			return nil, err
		}
	}
	if err := s.launch(bin, serverArgs(h.cfg, name, lead, addr, s.dataDir), serverEnv(h.cfg)); err != nil {
		return nil, err
	}
	if err := s.waitReady(ctx, h.cfg.StartTimeout); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// serverArgs is a system's command line after the binary. --kgateway-args
// go last so that they can override what kgbench sets (kgateway's flags,
// like Go's, let the last occurrence win). In them, {addr} stands for the
// address kgbench chose and dials; when they use it, they say how to
// listen there (e.g. a SASL_SSL listener) and kgbench passes no --listen.
func serverArgs(cfg *config, name string, lead []string, addr, dataDir string) []string {
	extra, placed := kgatewayExtraArgs(cfg, name, addr)
	args := slices.Clone(lead)
	if !placed {
		args = append(args, "--listen", addr)
	}
	args = append(args, "--data-dir", dataDir)
	if name == "kgateway" {
		// Its metrics server runs, as deployed, but on a port of its own:
		// on the default port anything left scraping it (a developer's
		// curl loop did) would bill its CPU to the benchmark.
		args = append(args, "--metrics-addr", "127.0.0.1:0")
		args = append(args, extra...)
	}
	return args
}

// addrPlaceholder in --kgateway-args is replaced by the listen address.
const addrPlaceholder = "{addr}"

// kgatewayExtraArgs splits --kgateway-args (kgateway only) and fills in
// addrPlaceholder; placed reports whether it occurred.
func kgatewayExtraArgs(cfg *config, name, addr string) (args []string, placed bool) {
	if name != "kgateway" {
		return nil, false
	}
	for _, f := range strings.Fields(cfg.KgatewayArgs) {
		if strings.Contains(f, addrPlaceholder) {
			placed = true
			f = strings.ReplaceAll(f, addrPlaceholder, addr)
		}
		args = append(args, f)
	}
	return args, placed
}

// serverEnv is every server's environment: kgbench's own, plus GOMAXPROCS
// when --server-procs is set. All the systems are Go programs, so the one
// variable caps each of them alike; with clients and server on the same
// few cores, it decides how many of them the server's scheduler spreads
// over.
func serverEnv(cfg *config) []string {
	env := os.Environ()
	if cfg.ServerProcs > 0 {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(cfg.ServerProcs))
	}
	return env
}

// systemCommand returns the binary and leading arguments for name.
func systemCommand(ctx context.Context, h *harness, name string) (string, []string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	switch name {
	case "kfake":
		return self, append([]string{serveKfakeCmd}, kfakeArgs(h.cfg)...), nil
	case "kfake-durable":
		return self, append([]string{serveKfakeCmd, "--durable"}, kfakeArgs(h.cfg)...), nil
	case "kgateway":
		bin, err := h.kgatewayBin(ctx)
		return bin, nil, err
	}
	return "", nil, fmt.Errorf("%w: unknown system %q", errConfig, name)
}

// buildKgateway runs `go build ./cmd/kgateway` in the kgateway module:
// the current module, or the one around it when kgbench runs from its own
// module (cmd/kgbench has a go.mod of its own).
func buildKgateway(ctx context.Context, root string) (string, error) {
	return buildMainCommand(ctx, root, "./cmd/kgateway")
}

// buildMainCommand runs `go build -o <root>/<base of pkg> pkg` in the
// kgateway module.
func buildMainCommand(ctx context.Context, root, pkg string) (string, error) {
	dir, err := kgatewayRepoDir(ctx)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, filepath.Base(pkg))
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("kgbench: building %s: %w: %s", pkg, err, lastLines(out, 5))
	}
	return bin, nil
}

// kgatewayRepoDir is the directory of the kgateway module around the
// current directory.
func kgatewayRepoDir(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("kgbench: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("kgbench: run from inside the kgateway repository (or pass --kgateway-bin)")
	}
	return kgatewayModuleDir(filepath.Dir(gomod))
}

// kgatewayModule is the server's module path.
const kgatewayModule = "github.com/kgateway/kgateway"

// kgatewayModuleDir finds the directory of the kgateway module: dir or the
// nearest directory above it whose go.mod declares kgatewayModule.
func kgatewayModuleDir(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePath(b) == kgatewayModule {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("kgbench: no %s module at or above the current one (pass --kgateway-bin)", kgatewayModule)
		}
		dir = parent
	}
}

// modulePath is the path on a go.mod's module line ("" if none).
func modulePath(gomod []byte) string {
	for line := range strings.Lines(string(gomod)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// freeLoopbackAddr asks the kernel for a free port. Another process could
// take it before the child binds it; the child then fails to start and the
// harness reports that rather than crashing.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func (s *system) launch(bin string, args, env []string) error {
	return s.launchWith(bin, args, env, nil)
}

// launchWith starts the child with its stdout and stderr in logPath, and
// its stdout also into stdout when that is set.
func (s *system) launchWith(bin string, args, env []string, stdout io.Writer) error {
	logf, err := os.Create(s.logPath)
	if err != nil {
		return err
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Env = env
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if stdout != nil {
		s.cmd.Stdout = io.MultiWriter(logf, stdout)
	}
	// If kgbench itself is killed, take the server down with it rather
	// than leave it holding a port and a temp dir (Linux only, like /proc).
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if isKafka(s.name) {
		// tools/apachekafka stops its broker (another process group) on
		// SIGTERM; SIGKILL would leave the JVM running.
		s.cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	}
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("kgbench: starting %s: %w", s.name, err)
	}
	go func() {
		s.exitErr = s.cmd.Wait()
		logf.Close()
		close(s.exited)
	}()
	return nil
}

// waitReady polls the port until it accepts, the child exits, or timeout.
func (s *system) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if err := s.checkAlive(); err != nil {
			return err
		}
		c, err := net.DialTimeout("tcp", s.addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.exited:
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("%w: %s on %s after %s", errStartTimeout, s.name, s.addr, timeout)
}

// checkAlive returns errSystemExited (with the log tail) once the child,
// or one of its peers, died.
func (s *system) checkAlive() error {
	for _, p := range s.peers {
		if err := p.checkAlive(); err != nil {
			return err
		}
	}
	select {
	case <-s.exited:
		log, _ := os.ReadFile(s.logPath)
		if s.serverLog != "" {
			if b, err := os.ReadFile(s.serverLog); err == nil {
				log = append(log, b...)
			}
		}
		why := fmt.Sprint(s.exitErr)
		if s.jvmGone.Load() {
			why = fmt.Sprintf("the JVM (pid %d) exited", s.pid)
		}
		return fmt.Errorf("%w: %s: %s: %s", errSystemExited, s.name, why, lastLines(log, 3))
	default:
		return nil
	}
}

// exitedWithin waits up to d for the child to exit; a client error often
// arrives a moment before the kernel reaps the crashed server.
func (s *system) exitedWithin(d time.Duration) bool {
	select {
	case <-s.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// stop sends SIGTERM, then SIGKILL if the child lingers; then it stops
// the peers, the last started first.
func (s *system) stop() {
	defer func() {
		for i := len(s.peers) - 1; i >= 0; i-- {
			s.peers[i].stop()
		}
	}()
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	timeout := s.stopTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	select {
	case <-s.exited:
	case <-time.After(timeout):
		_ = s.cmd.Process.Kill()
		<-s.exited
		s.killJVM() // the wrapper was killed with the JVM still up
	}
}

// memory reads VmRSS and VmHWM (peak RSS) of the child, in bytes.
func (s *system) memory() (rss, peak int64, err error) {
	rss, peak, err = procMemory(s.procPid())
	for _, p := range s.peers {
		r, pk, perr := procMemory(p.procPid())
		rss, peak, err = rss+r, peak+pk, errors.Join(err, perr)
	}
	return rss, peak, err
}

// procMemory reads VmRSS and VmHWM of pid from /proc/<pid>/status.
func procMemory(pid int) (rss, peak int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return rss, peak, nil
}

// clockTicks is USER_HZ, the unit of utime/stime in /proc/<pid>/stat; it
// is 100 on every Linux architecture Go supports.
const clockTicks = 100

// cpuSeconds reads the child's user+system CPU time so each workload can
// report what the server spent, independent of the client's share of the
// machine's cores.
func (s *system) cpuSeconds() (float64, error) {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0, errNoProcess // a server in the test's own process
	}
	total, err := procCPUSeconds(s.procPid())
	for _, p := range s.peers {
		cpu, perr := procCPUSeconds(p.procPid())
		total, err = total+cpu, errors.Join(err, perr)
	}
	return total, err
}

// procCPUSeconds reads pid's user+system CPU time (all its threads) from
// /proc/<pid>/stat.
func procCPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields after ')' start
	// at field 3 (state), so utime (14) and stime (15) are at 11 and 12.
	i := bytes.LastIndexByte(b, ')')
	var f []string
	if i >= 0 {
		f = strings.Fields(string(b[i+1:]))
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("kgbench: unexpected /proc stat %q", b)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return float64(utime+stime) / clockTicks, nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(bytes.ToValidUTF8(b, nil))), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// serveKfake runs kfake with one broker on --listen until SIGTERM/SIGINT.
// --durable adds DataDir(--data-dir) and SyncWrites: every produced batch is
// fsynced before it is acknowledged, the same promise kgateway makes (D1).
func serveKfake(args []string) error {
	fs := flag.NewFlagSet(serveKfakeCmd, flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	dataDir := fs.String("data-dir", "", "data directory (used with --durable)")
	durable := fs.Bool("durable", false, "persist to --data-dir with SyncWrites")
	keystore := fs.String("tls-keystore", "", "PEM private key and certificate chain: serve TLS")
	saslMech := fs.String("sasl-mechanism", "", "with --sasl-user: require SASL, with this user as a superuser")
	saslUser := fs.String("sasl-user", "", "SASL superuser")
	saslPassFile := fs.String("sasl-password-file", "", "file whose first line is the superuser's password")
	heartbeat := fs.Duration("group-heartbeat", 0, "KIP-848 and share-group heartbeat interval (0: kfake's default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	_, portStr, err := net.SplitHostPort(*listen)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return err
	}
	opts := []kfake.Opt{kfake.Ports(port), kfake.ClusterID("kgbench")}
	sec, err := kfakeSecurityOpts(*keystore, *saslMech, *saslUser, *saslPassFile)
	if err != nil {
		return err
	}
	opts = append(opts, sec...)
	if *heartbeat > 0 {
		ms := strconv.FormatInt(heartbeat.Milliseconds(), 10)
		opts = append(opts, kfake.BrokerConfigs(map[string]string{
			"group.consumer.heartbeat.interval.ms": ms,
			"group.share.heartbeat.interval.ms":    ms,
		}))
	}
	if *durable {
		opts = append(opts, kfake.DataDir(*dataDir), kfake.SyncWrites())
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return fmt.Errorf("kgbench: kfake: %w", err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	c.Close()
	return nil
}

// addSASLUser creates the benchmark's SASL user in kgateway's fresh data
// directory with `kgateway users add`, the password on stdin, so that a
// SASL listener set up by --kgateway-args accepts the clients. PLAIN
// checks the SCRAM credentials, so any of the SCRAM mechanisms serves it.
func addSASLUser(ctx context.Context, bin, dataDir string, sec *security) error {
	if !sec.usesSASL() {
		return nil
	}
	pass, err := sec.password()
	if err != nil {
		return err
	}
	mech := sec.SASLMechanism
	if mech == "PLAIN" {
		mech = "SCRAM-SHA-256"
	}
	cmd := exec.CommandContext(ctx, bin, "users", "add", sec.SASLUser, "--mechanism", mech, "--data-dir", dataDir)
	cmd.Stdin = strings.NewReader(pass + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kgbench: kgateway users add: %w: %s", err, out)
	}
	return nil
}

// kfakeArgs are serve-kfake's flags from the config: --group-heartbeat,
// and the security ones.
func kfakeArgs(cfg *config) []string {
	return append([]string{"--group-heartbeat", cfg.GroupHeartbeat.String()}, kfakeSecurityArgs(cfg)...)
}

// kfakeSecurityArgs are serve-kfake's flags for --kfake-keystore and the
// client's SASL settings: kfake then serves what the clients speak.
func kfakeSecurityArgs(cfg *config) []string {
	var args []string
	if cfg.KfakeKeystore != "" && cfg.Security.usesTLS() {
		args = append(args, "--tls-keystore", cfg.KfakeKeystore)
	}
	if cfg.Security.usesSASL() && cfg.Security.SASLPasswordFile != "" {
		args = append(args, "--sasl-mechanism", cfg.Security.SASLMechanism, "--sasl-user", cfg.Security.SASLUser,
			"--sasl-password-file", cfg.Security.SASLPasswordFile)
	}
	return args
}

// kfakeSecurityOpts turns serve-kfake's security flags into kfake options.
func kfakeSecurityOpts(keystore, mech, user, passFile string) ([]kfake.Opt, error) {
	var opts []kfake.Opt
	if keystore != "" {
		cert, err := tls.LoadX509KeyPair(keystore, keystore)
		if err != nil {
			return nil, fmt.Errorf("kgbench: kfake keystore: %w", err)
		}
		opts = append(opts, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}))
	}
	if user != "" {
		pass, err := (&security{SASLPasswordFile: passFile}).password()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kfake.EnableSASL(), kfake.Superuser(mech, user, pass))
	}
	return opts, nil
}
