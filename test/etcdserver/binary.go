package etcdserver

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Version is the etcd release the tests run: the one kgateway's go.mod
// requires of go.etcd.io/etcd/server/v3 (the Makefile's ETCD_VERSION must
// be the same; TestPins checks both).
const Version = "v3.7.3"

// Package is etcd's server main package.
const Package = "go.etcd.io/etcd/server/v3"

// EnvBinary names an etcd binary to use instead of BinaryPath().
const EnvBinary = "KGW_ETCD"

var install struct {
	mu   sync.Mutex
	path string
}

// Binary returns the etcd binary the tests run, building it when it is
// missing.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvBinary); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", EnvBinary, p, err)
		}
		return p
	}
	install.mu.Lock()
	defer install.mu.Unlock()
	if install.path != "" {
		return install.path
	}
	p, err := BinaryPath()
	if err != nil {
		t.Fatalf("etcd: %v", err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Logf("etcd %s missing at %s: building it (a few minutes; `make deps` does it ahead)", Version, p)
		if err := build(p); err != nil {
			t.Fatalf("build etcd %s: %v", Version, err)
		}
	}
	install.path = p
	return p
}

// BinaryPath is where etcd Version is installed: bin/etcd-<Version> under
// the first GOPATH entry, shared by every checkout on the machine.
func BinaryPath() (string, error) {
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOPATH: %w", err)
	}
	gopath := filepath.SplitList(strings.TrimSpace(string(out)))
	if len(gopath) == 0 || gopath[0] == "" {
		return "", errors.New("go env GOPATH is empty")
	}
	return filepath.Join(gopath[0], "bin", "etcd-"+Version), nil
}

// build installs etcd Version at path. etcd's server module has replace
// directives, so `go install pkg@version` refuses it: it is built inside
// a throwaway module that requires it, then renamed into place, so a
// concurrent test process sees either no binary or a whole one.
func build(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".etcd-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, args := range [][]string{
		{"mod", "init", "etcdbuild"},
		{"get", Package + "@" + Version},
		{"build", "-o", filepath.Join(tmp, "etcd"), Package},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		// A test killed mid-build (its timeout) stops the build too.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return os.Rename(filepath.Join(tmp, "etcd"), path)
}
