package s3server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The names and credentials of every server. They are test values, never
// real secrets.
const (
	AccessKey = "kgateway-test-access"
	SecretKey = "kgateway-test-secret"
	Region    = "us-east-1"
	Bucket    = "kgateway"
)

// startTimeout bounds how long a launch waits for the server to answer.
const startTimeout = time.Minute

// Server is a running versitygw serving Bucket.
type Server struct {
	// URL is the object.store.url of Bucket.
	URL string
	// Endpoint is the server's base URL, http://127.0.0.1:port.
	Endpoint string
	// Dir is the POSIX root: Dir/Bucket holds the objects as files, which
	// a test may damage to make the store lie.
	Dir string

	t    testing.TB
	bin  string
	addr string
	meta string // versitygw's sidecar metadata directory
	log  string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start starts a server for the test and stops it at the test's cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	setCredentials()
	root := dataRoot(t)
	s := &Server{
		Dir:  filepath.Join(root, "data"),
		meta: filepath.Join(root, "meta"),
		log:  filepath.Join(root, "versitygw.log"),
		t:    t,
		bin:  bin,
	}
	// In the POSIX backend a bucket is a directory under the root.
	for _, d := range []string{filepath.Join(s.Dir, Bucket), s.meta} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// versitygw cannot report the port it bound, so a free port is
	// reserved and released first; another process taking it meanwhile
	// makes the launch fail with "address already in use", and a new port
	// is tried.
	var err error
	for range 5 {
		if s.addr, err = freeAddr(); err != nil {
			t.Fatal(err)
		}
		if err = s.launch(); !errors.Is(err, errAddrInUse) {
			break
		}
	}
	if err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	s.Endpoint = "http://" + s.addr
	s.URL = fmt.Sprintf("s3://%s?endpoint=%s&region=%s&use_path_style=true", Bucket, s.Endpoint, Region)
	t.Cleanup(s.Stop)
	return s
}

// Env is the environment a child process (a kgateway binary) needs to reach
// any of these servers.
func Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_REGION=" + Region,
	}
}

// setCredentials makes the AWS credential chain of this process find the
// servers' credentials first: the environment's keys, with no session
// token and no profile (a profile would take precedence over them).
func setCredentials() {
	for _, kv := range Env() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	os.Unsetenv("AWS_SESSION_TOKEN")
	os.Unsetenv("AWS_PROFILE")
}

// Stop stops the server (SIGTERM, then SIGKILL after 10s). Its data stays
// until the test ends; Restart serves it again.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGCONT) // a paused server could not act on SIGTERM
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
}

// Pause freezes the server (SIGSTOP): its socket stays open, so the
// kernel still accepts connections, but no request is answered: a hung
// or black-holed object store. Resume continues it.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server; requests sent meanwhile are served.
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.t.Fatalf("signal %v: versitygw is not running", sig)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("signal %v to versitygw: %v", sig, err)
	}
}

// Restart stops the server if it runs and starts it again on the same port
// over the same data. Call it from the test's goroutine.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.launch(); err != nil {
		s.t.Fatalf("restart versitygw on %s: %v", s.addr, err)
	}
}

var errAddrInUse = errors.New("address already in use")

// EnvDir names the directory under which Start makes each server's
// directory (default QuietDir; TMPDIR, when set, is taken as the choice of
// the person running the tests and wins over the default).
const EnvDir = "KGW_S3SERVER_DIR"

// QuietDir is where a server's directory goes by default: a directory
// on the same disk as /tmp but away from it. Every test on a machine makes
// and removes its temporary directories under /tmp, and on ext4 without
// a journal each new inode's allocation steps past every inode of its
// group freed in the last minute or more: an object's O_TMPFILE under
// /tmp cost 0.5 ms of a loopback PUT on a busy machine, and more as the
// churn grew, where the same file under /var/tmp cost tens of µs.
const QuietDir = "/var/tmp"

// dataRoot makes the server's directory, removed when the test ends:
// under $KGW_S3SERVER_DIR, else under $TMPDIR when set, else under
// QuietDir when it is a writable directory, else the test's TempDir.
func dataRoot(t testing.TB) string {
	base := os.Getenv(EnvDir)
	if base == "" && os.Getenv("TMPDIR") == "" {
		base = QuietDir
	}
	if base == "" {
		return t.TempDir()
	}
	root, err := os.MkdirTemp(base, "kgw-s3server-")
	if err != nil {
		if os.Getenv(EnvDir) != "" {
			t.Fatalf("%s: %v", EnvDir, err)
		}
		return t.TempDir()
	}
	// Registered before the server's Stop, so it runs after it.
	t.Cleanup(func() { os.RemoveAll(root) })
	return root
}

// Args are versitygw's arguments to serve dir on addr. --keep-alive keeps
// its connections open between requests, as every real object store
// does: without it versitygw closes each connection after one response,
// and every PUT, GET and DELETE pays for a new TCP connection (a connect,
// an accept, a socket in TIME_WAIT), which a benchmark would count as the
// store's latency.
//
// An object's metadata (its ETag, checksum and content type) goes where
// versitygw keeps it by default, in extended attributes of the object's
// file, set before the file is linked into place, when dir's file system
// takes user attributes (Xattrs); else in sidecar files under meta. A
// sidecar costs every PUT five more inodes (two directories and three
// files, each written and renamed into place) and every delete as many
// unlinks: on ext4 without a journal, where each new inode's allocation
// steps past every inode of its group freed in the last minute or more,
// that made a PUT cost 1 to 18 ms on one machine, moving with the deletes
// around it, where the same PUT with attributes costs one inode.
//
// --disable-object-lock-file leaves a conditional write's exclusion
// (If-None-Match, If-Match) to versitygw's in-process lock per key shard,
// without also taking a flock on a shared lock file (an open, a flock and
// a close per PUT): the file lock is there for several gateway processes
// over one directory, and each of these servers has its directory to
// itself (Restart stops the old process before starting the new one).
func Args(addr, meta, dir string) []string {
	args := []string{"--port", addr, "--region", Region, "--quiet", "--keep-alive",
		"posix", "--disable-object-lock-file"}
	if !Xattrs(dir) {
		args = append(args, "--sidecar", meta)
	}
	return append(args, dir)
}

// Xattrs says whether dir's file system takes user extended attributes,
// by setting one on dir and removing it.
func Xattrs(dir string) bool {
	const probe = "user.kgateway-probe"
	if err := unix.Setxattr(dir, probe, []byte{1}, 0); err != nil {
		return false
	}
	unix.Removexattr(dir, probe)
	return true
}

// launch starts versitygw on s.addr and waits until it answers.
func (s *Server) launch() error {
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	logStart, _ := logf.Seek(0, 2)
	cmd := exec.Command(s.bin, Args(s.addr, s.meta, s.Dir)...)
	// The root credentials go by environment, not on the command line.
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+AccessKey, "ROOT_SECRET_ACCESS_KEY="+SecretKey)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The server dies with the test process, even on a kill -9 of it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	if err := waitReady("http://"+s.addr, exited); err != nil {
		cmd.Process.Kill()
		<-exited
		out := s.logSince(logStart)
		if strings.Contains(out, "address already in use") {
			return errAddrInUse
		}
		return fmt.Errorf("%v; its log:\n%s", err, out)
	}
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	return nil
}

// waitReady polls endpoint until versitygw answers there (its Server
// header, so not another process that took the port), the process exits,
// or startTimeout passes.
func waitReady(endpoint string, exited <-chan struct{}) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.After(startTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := client.Get(endpoint + "/")
		if err == nil {
			resp.Body.Close()
			if resp.Header.Get("Server") == "VERSITYGW" {
				return nil
			}
		}
		select {
		case <-exited:
			return errors.New("versitygw exited")
		case <-deadline:
			return fmt.Errorf("versitygw did not answer at %s within %v", endpoint, startTimeout)
		case <-tick.C:
		}
	}
}

func (s *Server) logSince(off int64) string {
	b, err := os.ReadFile(s.log)
	if err != nil || off > int64(len(b)) {
		return ""
	}
	return string(b[off:])
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
