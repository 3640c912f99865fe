package test

import (
	"os"
	"testing"
)

func mkdirTemp() (string, error) { return os.MkdirTemp("", "kgateway-e2e-") }

func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	os.Exit(code)
}
