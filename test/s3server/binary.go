package s3server

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

// Version is the pinned versitygw release (the Makefile's VERSITYGW_VERSION
// must be the same; TestMakefilePin checks it).
const Version = "v1.8.0"

// Package is versitygw's main package.
const Package = "github.com/versity/versitygw/cmd/versitygw"

// EnvBinary names a versitygw binary to use instead of BinaryPath().
const EnvBinary = "KGW_VERSITYGW"

var install struct {
	mu   sync.Mutex
	path string
}

// Binary returns the versitygw binary the tests run, building it when it is
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
		t.Fatalf("versitygw: %v", err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Logf("versitygw %s missing at %s: building it (a few minutes; `make deps` does it ahead)", Version, p)
		if err := build(p); err != nil {
			t.Fatalf("build versitygw %s: %v", Version, err)
		}
	}
	install.path = p
	return p
}

// BinaryPath is where versitygw Version is installed: bin/versitygw-<Version>
// under the first GOPATH entry, shared by every checkout on the machine.
func BinaryPath() (string, error) {
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOPATH: %w", err)
	}
	gopath := filepath.SplitList(strings.TrimSpace(string(out)))
	if len(gopath) == 0 || gopath[0] == "" {
		return "", errors.New("go env GOPATH is empty")
	}
	return filepath.Join(gopath[0], "bin", "versitygw-"+Version), nil
}

// build installs versitygw Version at path: `go install` into a temporary
// directory beside path, then a rename, so a concurrent test process sees
// either no binary or a whole one.
func build(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".versitygw-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "install", Package+"@"+Version)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp)
	// A test killed mid-build (its timeout) stops the build too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return os.Rename(filepath.Join(tmp, "versitygw"), path)
}
