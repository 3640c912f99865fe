// Package kgateway holds repository-wide checks; the server lives in the
// subdirectories (docs/DESIGN.md "Layers").
package kgateway

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	mod      = "github.com/kgateway/kgateway/"
	franzGo  = "github.com/twmb/franz-go" // kmsg, kerr, kgo, kbin: the wire protocol
	pebble   = "github.com/cockroachdb/pebble"
	plotting = "gonum.org/v1/plot"
	kfake    = "github.com/twmb/franz-go/pkg/kfake"
)

// layerRule forbids the Go files under dir (and the directories below it,
// but not a nested module's) to import any path starting with one of bad.
type layerRule struct {
	dir      string
	bad      []string
	prodOnly bool // test files are exempt (they may build fixtures)
	why      string
}

// layerRules is docs/DESIGN.md "Layers" as a table: imports only point
// downwards, cmd/kgateway -> server/ -> kafka/ -> resolver/ -> ledger/,
// offsets/ -> storage/, and each layer keeps its dependencies to itself.
// server/ assembles the layers; only cmd/kgateway and tests import it.
var layerRules = []layerRule{
	{dir: "storage", bad: []string{mod + "ledger", mod + "resolver", mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", franzGo},
		why: "storage is the bottom layer and knows no Kafka wire type"},
	{dir: "ledger", bad: []string{mod + "resolver", mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", franzGo},
		why: "ledger sits on storage only and knows no Kafka wire type"},
	{dir: "offsets", bad: []string{mod + "storage", mod + "ledger", mod + "resolver", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", franzGo},
		why: "offsets keeps its own pebble and knows nothing of the ledger (O3) or the wire"},
	{dir: "cleaner", bad: []string{mod + "resolver", mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", franzGo},
		why: "the log cleaner sees partitions only through its Partition and Host interfaces (the resolver implements them), never the resolver itself"},
	{dir: "cleaner", bad: []string{pebble, mod + "ledger"}, prodOnly: true, why: "the cleaner rewrites storage logs; ledgers and pebble are not its business"},
	{dir: "retention", bad: []string{mod + "resolver", mod + "cleaner", mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", franzGo},
		why: "retention and tiering see partitions only through their Partition and Host interfaces (the resolver implements them)"},
	{dir: "retention", bad: []string{pebble}, prodOnly: true, why: "pebble is storage's"},
	{dir: "recordbatch", bad: []string{mod + "ledger", mod + "resolver", mod + "cleaner", mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", franzGo, pebble},
		why: "recordbatch is the batch format only: it reads bytes, below every layer that stores them, without kmsg"},
	{dir: "resolver", bad: []string{mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", franzGo},
		why: "resolver is below kafka/ and reads batch headers itself, without kmsg"},
	{dir: "ledger", bad: []string{pebble}, prodOnly: true, why: "pebble is storage's: ledger reaches it only through storage"},
	{dir: "resolver", bad: []string{pebble}, prodOnly: true, why: "pebble is storage's: resolver reaches it only through storage"},
	{dir: "kafka", bad: []string{mod + "storage", mod + "ledger", mod + "recordbatch", mod + "cleaner", mod + "retention", mod + "metrics", mod + "server", mod + "cmd", pebble},
		why: "kafka/ reaches data only through resolver/ (which re-exports what it needs) and groups through offsets/"},
	{dir: "auth", bad: []string{mod + "storage", mod + "ledger", mod + "resolver", mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", pebble, franzGo},
		why: "auth is a toolkit below kafka/: mechanisms, credentials, TLS, no wire and no data"},
	{dir: "kafka/group", bad: []string{mod + "resolver"}, why: "the group coordinator works over offsets/ only"},
	{dir: "kafka/txn", bad: []string{mod + "resolver", mod + "kafka/group"}, prodOnly: true,
		why: "the transaction coordinator works over offsets/ and reaches partitions and groups through its interfaces (wired in kafka/)"},
	{dir: "kafka/share", bad: []string{mod + "resolver", mod + "kafka/group", mod + "kafka/txn"}, prodOnly: true,
		why: "the share coordinator works over offsets/ and reads partitions through its Log interface (wired in kafka/), cursorless (Q9)"},
	{dir: "metrics", bad: []string{mod + "storage", mod + "ledger", mod + "resolver", mod + "offsets", mod + "kafka", mod + "server", mod + "cmd", pebble, franzGo},
		why: "metrics is fed by server/ through interfaces (M3)"},
	{dir: "server", bad: []string{mod + "cmd"}, why: "server/ wires the layers below it; configuration stays in cmd/kgateway"},
	{dir: "server", bad: []string{franzGo}, prodOnly: true, why: "the wire is kafka/'s; server/'s tests may dial it with a client"},
	{dir: ".", bad: []string{plotting, kfake},
		why: "the benchmark's plotting and kfake stay in cmd/kgbench's own module"},
	{dir: ".", bad: []string{"github.com/confluentinc/confluent-kafka-go"},
		why: "librdkafka (cgo) stays in test/librdkafka's own module"},
}

// TestLayering enforces layerRules.
func TestLayering(t *testing.T) {
	for _, r := range layerRules {
		err := walkModule(r.dir, func(path string) error {
			if r.prodOnly && strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p := strings.Trim(imp.Path.Value, `"`)
				for _, bad := range r.bad {
					if p == bad || strings.HasPrefix(p, bad+"/") {
						t.Errorf("%s imports %s: forbidden under %s/ (%s)", path, p, r.dir, r.why)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walk %s: %v", r.dir, err)
		}
	}
}

// walkModule calls fn for every .go file under dir that belongs to this
// module: it skips testdata, hidden directories and nested modules.
func walkModule(dir string, fn func(path string) error) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == dir {
				return nil
			}
			if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own (cmd/kgbench)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		return fn(path)
	})
}

// TestNoCursor enforces R1 at the source level: there is no cursor type
// anywhere in the code base.
func TestNoCursor(t *testing.T) {
	err := walkModule(".", func(path string) error {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for name, obj := range f.Scope.Objects {
			if obj.Kind.String() == "type" && strings.Contains(strings.ToLower(name), "cursor") {
				t.Errorf("%s declares type %s: R1 forbids cursors", path, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
