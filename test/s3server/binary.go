package s3server

import (
	"testing"

	"github.com/kgateway/kgateway/test/toolbin"
)

// Version is the pinned versitygw release (the Makefile's VERSITYGW_VERSION
// must be the same; TestMakefilePin checks it).
const Version = "v1.8.0"

// Package is versitygw's main package.
const Package = "github.com/versity/versitygw/cmd/versitygw"

// EnvBinary names a versitygw binary to use instead of BinaryPath().
const EnvBinary = "KGW_VERSITYGW"

var tool = &toolbin.Tool{Name: "versitygw", Version: Version, Env: EnvBinary,
	Build: toolbin.GoInstall(Package, Version)}

// Binary returns the versitygw binary the tests run, building it when it is
// missing.
func Binary(t testing.TB) string { return tool.Binary(t) }

// BinaryPath is where versitygw Version is installed:
// bin/versitygw-<Version> under the first GOPATH entry, shared by every
// checkout on the machine.
func BinaryPath() (string, error) { return tool.Path() }
