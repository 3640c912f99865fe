// Package kgbin builds cmd/kgateway once per test process, for the tests
// that run kgateway as a real process (test, test/cluster).
package kgbin

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var build struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Path builds cmd/kgateway on its first call and returns the binary's
// path; a build that failed fails every caller.
func Path(t testing.TB) string {
	t.Helper()
	path, err := Build()
	if err != nil {
		t.Fatalf("build kgateway: %v", err)
	}
	return path
}

// Build is Path for callers without a testing.TB (a TestMain): it builds
// cmd/kgateway on its first call and returns the binary's path or the
// build's error.
func Build() (string, error) {
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "kgateway-bin-")
		if build.err != nil {
			return
		}
		build.path = filepath.Join(build.dir, "kgateway")
		out, err := exec.Command("go", "build", "-o", build.path, "github.com/kgateway/kgateway/cmd/kgateway").CombinedOutput()
		if err != nil {
			build.err = errors.New(string(out))
		}
	})
	return build.path, build.err
}

// Remove deletes the built binary; a TestMain calls it after the tests.
func Remove() {
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
}
