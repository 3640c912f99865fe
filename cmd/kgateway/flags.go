package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
)

// rawValue holds a flag's text until load applies it in precedence order
// (so a flag's default never overrides the file or the environment).
type rawValue struct {
	s      string
	isBool bool
}

func (v *rawValue) String() string     { return v.s }
func (v *rawValue) Set(s string) error { v.s = s; return nil }
func (v *rawValue) IsBoolFlag() bool   { return v.isBool }

// newFlagSet registers every Config field as a flag (plus --config) and
// returns the fields by flag name.
func newFlagSet(name string, stderr io.Writer) (*flag.FlagSet, map[string]field, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFile := fs.String("config", "", "server.properties-style file of key=value lines (# comments); the environment and flags override it")
	def := DefaultConfig()
	byFlag := make(map[string]field, len(fields))
	for _, f := range fields {
		v := &rawValue{s: def.get(f), isBool: f.kind == reflect.Bool}
		fs.Var(v, f.flag, fmt.Sprintf("%s (property %s, env %s)", f.help, f.prop, f.env))
		byFlag[f.flag] = f
	}
	fs.Usage = func() { usage(fs, name) }
	return fs, byFlag, cfgFile
}

func usage(fs *flag.FlagSet, name string) {
	out := fs.Output()
	if name == "kgateway" {
		fmt.Fprint(out, strings.TrimLeft(commandsHelp, "\n"))
	} else {
		fmt.Fprintf(out, "usage: kgateway %s [flags]\n", name)
	}
	fmt.Fprintln(out, "\nflags (each also a --config property and a KGATEWAY_ variable; flag > env > file > default):")
	fs.PrintDefaults()
}

const commandsHelp = `
usage: kgateway [command] [flags]

commands:
  serve (default)   serve the Kafka protocol
  config            print the effective configuration and where each value came from
                    (--reference: the configuration reference as markdown)
  inspect           list topics, partitions, ledgers and groups of a data directory
  explain T P O     show the read plan of a fetch of topic T, partition P at offset O
  verify            check every entry's CRC and the index's consistency
  apis              print the supported API keys and versions (--markdown: as a table)
  users             add NAME, delete NAME or list SCRAM users of the data directory
                    (add: --mechanism M, --iterations N, --password-file FILE or stdin)
  cluster status    nodes, sessions, partition owners and epochs, upload, merge and
                    collection backlogs of the cluster in cluster.etcd.endpoints

inspect, explain and verify open the data directory read-only, and users
changes only its credential file: they work on a stopped or a running
server's directory.
`

var stdEnv = os.Environ
