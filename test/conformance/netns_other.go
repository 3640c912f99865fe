//go:build !linux

package main

import (
	"errors"
	"os/exec"
)

// runInNetns: network namespaces are Linux's.
func runInNetns(*exec.Cmd) error { return errors.New("network namespaces need Linux") }

func loopbackUp() error { return errors.New("network namespaces need Linux") }
