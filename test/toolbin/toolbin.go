// Package toolbin finds, and builds when they are missing, the pinned
// third-party binaries the tests run (the S3 server, the etcd server):
// each is built from the Go module proxy into the first GOPATH's bin/,
// under a versioned name, shared by every checkout on the machine, where
// `make deps` builds it ahead.
package toolbin

import (
	"bytes"
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

// Tool is one pinned binary.
type Tool struct {
	// Name and Version make the installed file's name, Name-Version.
	Name, Version string
	// Env names a binary to use instead (its value, a path).
	Env string
	// Build builds the binary in the empty directory dir and returns its
	// path there.
	Build func(dir string) (string, error)

	mu   sync.Mutex
	path string
}

// Binary returns the tool's binary, building it when it is missing.
func (tl *Tool) Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(tl.Env); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", tl.Env, p, err)
		}
		return p
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.path != "" {
		return tl.path
	}
	p, err := tl.Path()
	if err != nil {
		t.Fatalf("%s: %v", tl.Name, err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Logf("%s %s missing at %s: building it (a few minutes; `make deps` does it ahead)", tl.Name, tl.Version, p)
		if err := tl.install(p); err != nil {
			t.Fatalf("build %s %s: %v", tl.Name, tl.Version, err)
		}
	}
	tl.path = p
	return p
}

// Path is where the tool is installed: bin/Name-Version under the first
// GOPATH entry.
func (tl *Tool) Path() (string, error) {
	out, err := goEnvGOPATH()
	if err != nil {
		return "", err
	}
	gopath := filepath.SplitList(strings.TrimSpace(string(out)))
	if len(gopath) == 0 || gopath[0] == "" {
		return "", errors.New("go env GOPATH is empty")
	}
	return filepath.Join(gopath[0], "bin", tl.Name+"-"+tl.Version), nil
}

// goEnvGOPATH runs `go env GOPATH`; a failure says what go printed.
func goEnvGOPATH() ([]byte, error) {
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, bytes.TrimSpace(ee.Stderr))
		}
		return nil, fmt.Errorf("go env GOPATH: %w", err)
	}
	return out, nil
}

// install builds the tool in a temporary directory beside path and
// renames it into place, so a concurrent test process sees either no
// binary or a whole one.
func (tl *Tool) install(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), "."+tl.Name+"-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	built, err := tl.Build(tmp)
	if err != nil {
		return err
	}
	return os.Rename(built, path)
}

// GoInstall builds pkg@version with go install (for a module without
// replace directives).
func GoInstall(pkg, version string) func(dir string) (string, error) {
	return func(dir string) (string, error) {
		if err := goCmd(dir, []string{"GOBIN=" + dir}, "install", pkg+"@"+version); err != nil {
			return "", err
		}
		return filepath.Join(dir, filepath.Base(pkg)), nil
	}
}

// GoBuildInModule builds pkg at version inside a throwaway module that
// requires it, for a module whose replace directives make go install
// refuse it; the binary is named name.
func GoBuildInModule(pkg, version, name string) func(dir string) (string, error) {
	return func(dir string) (string, error) {
		env := []string{"GOFLAGS=-mod=mod", "GOWORK=off"}
		for _, args := range [][]string{
			{"mod", "init", "toolbuild"},
			{"get", pkg + "@" + version},
			{"build", "-o", filepath.Join(dir, name), pkg},
		} {
			if err := goCmd(dir, env, args...); err != nil {
				return "", err
			}
		}
		return filepath.Join(dir, name), nil
	}
}

func goCmd(dir string, env []string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	// A test killed mid-build (its timeout) stops the build too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}
