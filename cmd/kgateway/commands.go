package main

// The inspection and documentation subcommands. inspect, explain and
// verify open the data directory read-only through server/ (Inspect,
// Explain, Verify): they work on a stopped directory and beside a running
// server.

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/server"
)

func configCmd(l loaded, stdout, _ io.Writer) error {
	if l.extra["--reference"] {
		_, err := io.WriteString(stdout, configReference())
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "# property\tvalue\tsource")
	for _, f := range fields {
		v := l.cfg.get(f)
		if f.secret && v != "" {
			v = "[hidden]"
		}
		fmt.Fprintf(tw, "%s=%s\t\t# %s\n", f.prop, v, l.sources[f.prop])
	}
	return tw.Flush()
}

// configReference is the README's configuration table, generated from
// Config's tags and defaults.
func configReference() string {
	var b strings.Builder
	b.WriteString("| property | flag | environment | default | meaning |\n| --- | --- | --- | --- | --- |\n")
	def := DefaultConfig()
	for _, f := range fields {
		d := def.get(f)
		if d == "" {
			d = `""`
		}
		fmt.Fprintf(&b, "| `%s` | `--%s` | `%s` | `%s` | %s |\n", f.prop, f.flag, f.env, d, f.help)
	}
	return b.String()
}

func apisCmd(l loaded, stdout, _ io.Writer) error {
	if l.extra["--markdown"] {
		_, err := io.WriteString(stdout, apisTable())
		return err
	}
	for _, a := range kafka.SupportedAPIs() {
		fmt.Fprintf(stdout, "%d\t%s\t%d-%d\n", a.Key, a.Name, a.Min, a.Max)
	}
	return nil
}

// apisTable is the README's "what is supported" table, generated from the
// dispatch table (kafka/apis.go) so that it cannot drift.
func apisTable() string {
	var b strings.Builder
	b.WriteString("| key | API | versions |\n| ---: | --- | --- |\n")
	for _, a := range kafka.SupportedAPIs() {
		fmt.Fprintf(&b, "| %d | %s | %d–%d |\n", a.Key, a.Name, a.Min, a.Max)
	}
	return b.String()
}

func inspectCmd(l loaded, stdout, _ io.Writer) error {
	if len(l.args) > 0 {
		return usageError{fmt.Errorf("inspect takes no arguments, got %v", l.args)}
	}
	return server.Inspect(l.cfg.DataDir, stdout)
}

func explainCmd(l loaded, stdout, _ io.Writer) error {
	if len(l.args) != 3 {
		return usageError{errors.New("usage: kgateway explain [--data-dir DIR] TOPIC PARTITION OFFSET")}
	}
	part, err1 := strconv.ParseInt(l.args[1], 10, 32)
	off, err2 := strconv.ParseInt(l.args[2], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return usageError{fmt.Errorf("explain: partition and offset must be integers: %w", err)}
	}
	return server.Explain(l.cfg.DataDir, l.args[0], int32(part), off, stdout)
}

func verifyCmd(l loaded, stdout, stderr io.Writer) error {
	if len(l.args) > 0 {
		return usageError{fmt.Errorf("verify takes no arguments, got %v", l.args)}
	}
	return server.Verify(l.cfg.DataDir, l.cfg.ObjectStoreURL, stdout, stderr)
}
