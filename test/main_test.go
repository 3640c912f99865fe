package test

import (
	"os"
	"testing"

	"github.com/kgateway/kgateway/test/kgbin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	kgbin.Remove()
	os.Exit(code)
}
