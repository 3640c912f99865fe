package etcdserver

import (
	"testing"

	"github.com/kgateway/kgateway/test/toolbin"
)

// Version is the etcd release the tests run: the one kgateway's go.mod
// requires of go.etcd.io/etcd/server/v3 (the Makefile's ETCD_VERSION must
// be the same; TestPins checks both).
const Version = "v3.7.3"

// Package is etcd's server main package.
const Package = "go.etcd.io/etcd/server/v3"

// EnvBinary names an etcd binary to use instead of BinaryPath().
const EnvBinary = "KGW_ETCD"

// etcd's server module has replace directives, so `go install pkg@version`
// refuses it: it is built inside a throwaway module that requires it.
var tool = &toolbin.Tool{Name: "etcd", Version: Version, Env: EnvBinary,
	Build: toolbin.GoBuildInModule(Package, Version, "etcd")}

// Binary returns the etcd binary the tests run, building it when it is
// missing.
func Binary(t testing.TB) string { return tool.Binary(t) }

// BinaryPath is where etcd Version is installed: bin/etcd-<Version> under
// the first GOPATH entry, shared by every checkout on the machine.
func BinaryPath() (string, error) { return tool.Path() }
