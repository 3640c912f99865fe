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
	etcd     = "go.etcd.io/etcd"
	cluster  = mod + "cluster"
)

// allModule is every top-level package tree of the module.
var allModule = []string{mod + "auth", cluster, mod + "kafka", mod + "resolver", mod + "ledger", mod + "storage",
	mod + "offsets", mod + "metrics", mod + "server", mod + "cmd", mod + "test", mod + "tools", mod + "bench", mod + "topicconfig", mod + "tier"}

// layerRule forbids the Go files under dir (and the directories below it,
// but not a nested module's) to import any path starting with one of bad.
type layerRule struct {
	dir string
	bad []string
	// allow are exceptions to bad: paths (and the paths below them) that
	// may be imported although a prefix in bad matches them.
	allow    []string
	prodOnly bool // test files are exempt (they may build fixtures)
	why      string
}

// layerRules is docs/DESIGN.md "Layers" as a table: imports only point
// downwards, cmd/kgateway -> server/ -> kafka/ -> resolver/ -> ledger/,
// offsets/ -> storage/, and each layer keeps its dependencies to itself.
// server/ assembles the layers; only cmd/kgateway and tests import it.
var layerRules = []layerRule{
	{dir: "bufpool", bad: append([]string{franzGo, pebble}, allModule...),
		why: "pooled buffers sit below every layer that reads into them (storage, the connection reader): no module package, no wire type"},
	{dir: "crc32c", bad: append([]string{franzGo, pebble}, allModule...),
		why: "the checksum of batches and frames sits below every layer that checks them (recordbatch, storage): no module package, no wire type"},
	{dir: "storage", bad: []string{mod + "tier", mod + "ledger", mod + "resolver", mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", franzGo},
		why: "storage is the bottom layer and knows no Kafka wire type"},
	{dir: "tier", bad: []string{mod + "ledger", mod + "resolver", mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", franzGo},
		why: "the object tier keeps sealed ledgers of storage's logs in an object store: it sits on storage and knows no Kafka wire type"},
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
	{dir: "topicconfig", bad: []string{mod + "resolver", mod + "cleaner", mod + "retention", mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", mod + "auth", franzGo, pebble, cluster, etcd},
		why: "topic configs are a vocabulary with no state: names, checks and what they resolve to, over the ledger's and the tier's config types"},
	{dir: "resolver", bad: []string{mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", franzGo},
		why: "resolver is below kafka/ and reads batch headers itself, without kmsg"},
	{dir: "ledger", bad: []string{pebble}, prodOnly: true, why: "pebble is storage's: ledger reaches it only through storage"},
	{dir: "resolver", bad: []string{pebble}, prodOnly: true, why: "pebble is storage's: resolver reaches it only through storage"},
	{dir: "resolver/txnstate", bad: []string{mod + "resolver", mod + "ledger", mod + "cleaner", mod + "retention", mod + "topicconfig", cluster, etcd},
		allow: []string{mod + "resolver/txnstate"},
		why:   "a partition's transaction state is data and its encoding: it sees the batch header and its own metadata keys in storage, never the resolver (which holds it under its locks), a ledger or the catalog"},
	{dir: "resolver/producerid", bad: []string{mod + "resolver", mod + "ledger", mod + "recordbatch", mod + "cleaner", mod + "retention", mod + "topicconfig", mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", franzGo, pebble, cluster, etcd},
		allow: []string{mod + "resolver/producerid"},
		why:   "the producer-id counter is two metadata keys in storage under its own lock: no partition, batch, catalog or resolver (which holds it)"},
	{dir: "resolver/identity", bad: []string{mod + "resolver", mod + "ledger", mod + "recordbatch", mod + "cleaner", mod + "retention", mod + "topicconfig", mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", franzGo, pebble, cluster, etcd},
		allow: []string{mod + "resolver/identity"},
		why:   "the cluster identity is a few metadata keys written once at Open: no catalog, partition or resolver (which says which names are internal)"},
	{dir: "resolver/explain", bad: []string{mod + "ledger", mod + "cleaner", mod + "retention", mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", franzGo, pebble, cluster, etcd},
		prodOnly: true,
		why:      "a read plan only reads a stopped data directory through storage.ReadOnly and the tier's listings, by the resolver's rules: no ledger is opened, no pass run, no wire or cluster"},
	{dir: "resolver/dynconfig", bad: []string{mod + "resolver", mod + "ledger", mod + "cleaner", mod + "retention", mod + "recordbatch", pebble},
		allow: []string{mod + "resolver/dynconfig"}, prodOnly: true,
		why: "dynamic broker and internal topic configs are edits, checks and a store's records: the resolver is their Host (an interface), the cluster keeps them in etcd through the catalog; no ledger, no pebble"},
	{dir: "kafka", bad: []string{mod + "storage", mod + "ledger", mod + "recordbatch", mod + "cleaner", mod + "retention", mod + "metrics", mod + "server", mod + "cmd", pebble},
		why: "kafka/ reaches data only through resolver/ (which re-exports what it needs) and groups through offsets/"},
	{dir: "auth", bad: []string{mod + "storage", mod + "ledger", mod + "resolver", mod + "offsets", mod + "kafka", mod + "metrics", mod + "server", mod + "cmd", pebble, franzGo},
		why: "auth is a toolkit below kafka/: mechanisms, credentials, TLS, no wire and no data"},
	{dir: "kafka/group", bad: []string{mod + "resolver"}, why: "the group coordinator works over offsets/ only"},
	{dir: "kafka/txn", bad: []string{mod + "resolver", mod + "kafka/group"}, prodOnly: true,
		why: "the transaction coordinator works over offsets/ and reaches partitions and groups through its interfaces (wired in kafka/)"},
	{dir: "kafka/share", bad: []string{mod + "resolver", mod + "kafka/group", mod + "kafka/txn"}, prodOnly: true,
		why: "the share coordinator works over offsets/ and reads partitions through its Log interface (wired in kafka/), cursorless (cursorless share reads)"},
	// kafka/ split by what it does: the handlers stay methods on
	// kafka.Server; the pieces below take what they need as small
	// interfaces or values and reach no layer but their own.
	{dir: "kafka/authz", bad: []string{mod + "resolver", mod + "offsets", mod + "kafka/", mod + "auth/"},
		allow: []string{mod + "kafka/authz", mod + "kafka/topicid"}, prodOnly: true,
		why: "authorization rules see a request's rights and the topic catalog through authz.Request (kafka/ implements it): auth's vocabulary, the wire, nothing of the data path"},
	{dir: "kafka/fetchsession", bad: allModule, prodOnly: true,
		why: "fetch sessions remember what a client asked for and was told (kmsg only); kafka/'s Fetch handler resolves, authorizes and reads"},
	{dir: "kafka/wire", bad: append([]string{franzGo}, allModule...), allow: []string{franzGo + "/pkg/kbin"}, prodOnly: true,
		why: "frame bodies and headers, the byte budget, idle deadlines and throttle mutes are bytes and sockets: kbin's primitives, no request type, nothing of the server"},
	{dir: "kafka/routing", bad: allModule, allow: []string{mod + "kafka/authz"}, prodOnly: true,
		why: "NOT_COORDINATOR answers and what a cluster node advertises are wire answers; who leads and who coordinates is kafka/'s Cluster"},
	{dir: "kafka/fetchwire", bad: allModule, allow: []string{mod + "resolver", mod + "kafka/sendfile"}, prodOnly: true,
		why: "fetch response segments: markers over the resolver's leased reads, written by kafka/sendfile; no request, no connection"},
	{dir: "kafka/connauth", bad: allModule, allow: []string{mod + "auth"}, prodOnly: true,
		why: "a connection's principal and SASL exchange over auth's mechanisms; the socket, logs and metrics are kafka/'s"},
	{dir: "kafka/apiversions", bad: allModule, allow: []string{mod + "kafka/features"}, prodOnly: true,
		why: "the ApiVersions answer from the key list and feature levels kafka/ hands in; the connection is kafka/'s"},
	{dir: "kafka/featuregate", bad: allModule, prodOnly: true,
		why: "which group protocol a feature at 0 turns off and its UNSUPPORTED_VERSION answer; the levels are kafka/features', the handlers kafka/'s"},
	{dir: "kafka/logoffsets", bad: allModule, prodOnly: true,
		why: "ListOffsets and OffsetForLeaderEpoch over the partitions kafka/ hands in through Log; the resolver and the cluster are kafka/'s"},
	{dir: "kafka/fetch", bad: allModule, allow: []string{mod + "resolver", mod + "kafka/fetchsession", mod + "kafka/fetchwire"}, prodOnly: true,
		why: "a fetch's items, budget, long poll and partition reads go through resolver handles and the session cache; the connection, authorizer, cluster and catalog are kafka/'s, behind fetch.Host and fetch.Call"},
	{dir: "kafka/produce", bad: allModule, allow: []string{mod + "resolver"}, prodOnly: true,
		why: "a produce's refusals, writes and waits go through resolver handles; the catalog, routing, the transaction coordinator and the cluster are kafka/'s, behind produce.Host"},
	{dir: "kafka/config", bad: allModule,
		allow: []string{mod + "auth", mod + "resolver", mod + "offsets", mod + "topicconfig", mod + "kafka/group", mod + "kafka/share",
			mod + "kafka/txn", mod + "kafka/quota", mod + "kafka/telemetry", mod + "kafka/tenancy", mod + "kafka/token", mod + "kafka/wire"}, prodOnly: true,
		why: "the server's configuration names the configuration types of what it configures; it runs nothing and reaches no handler, connection or cluster package"},
	{dir: "logging", bad: append([]string{franzGo}, allModule...),
		why: "the logger registry wraps zap only; the BROKER_LOGGER resource it backs is kafka/brokerlogger's"},
	{dir: "kafka/brokerlogger", bad: allModule, allow: []string{mod + "topicconfig"}, prodOnly: true,
		why: "the BROKER_LOGGER resource over the logger registry (package logging); the connection and the handlers are kafka/'s"},
	{dir: "kafka/topicadmin", bad: allModule, allow: []string{mod + "resolver", mod + "kafka/config", mod + "kafka/tenancy"}, prodOnly: true,
		why: "topic creation checks and partition bounds go through the catalog and the topics kafka/ hands in; ACLs, quotas and answers are kafka/'s"},
	{dir: "kafka/topicview", bad: allModule,
		allow: []string{mod + "resolver", mod + "kafka/authz", mod + "kafka/paging", mod + "kafka/replicas", mod + "kafka/topicadmin", mod + "kafka/topicid"}, prodOnly: true,
		why: "how topics and partitions are shown, read through topicview.Host; who may see a topic, the cluster and the catalog are kafka/'s"},
	{dir: "kafka/connection", bad: allModule, allow: []string{mod + "kafka/wire", mod + "kafka/sendfile"}, prodOnly: true,
		why: "a connection's frames: reading within the budget and idle deadline, request order, in-flight window, mutes and writes; what a request means (keys, authentication, handlers) is kafka/'s, behind connection.Handler"},
	{dir: "kafka/acls", bad: allModule, allow: []string{mod + "auth"}, prodOnly: true,
		why: "the ACL APIs over auth's ACL store; who may call them, logs and the connection are kafka/'s"},
	{dir: "kafka/token", bad: allModule, allow: []string{mod + "auth"}, prodOnly: true,
		why: "the delegation token APIs and token credentials over auth's vocabulary and a document kafka/'s caller hands in; the connection and authorizer are kafka/'s, behind token.Caller"},
	{dir: "kafka/scram", bad: allModule, allow: []string{mod + "auth"}, prodOnly: true,
		why: "the SCRAM credential APIs over auth's credential store; who may call them, logs and the connection are kafka/'s"},
	{dir: "metrics", bad: []string{mod + "storage", mod + "ledger", mod + "resolver", mod + "offsets", mod + "kafka", mod + "server", mod + "cmd", pebble, franzGo},
		why: "metrics is fed by server/ through interfaces (no storage or protocol imports)"},
	{dir: "server", bad: []string{mod + "cmd"}, why: "server/ wires the layers below it; configuration stays in cmd/kgateway"},
	{dir: "server", bad: []string{franzGo}, prodOnly: true, why: "the wire is kafka/'s; server/'s tests may dial it with a client"},

	// cluster/ is the cluster mode (docs/DESIGN.md "Cluster mode"): etcd
	// and the object store, wired in by server/. The layers below server/
	// know nothing of it, and it is built from small packages that each
	// reach only what their rules are about.
	{dir: "storage", bad: []string{cluster, etcd}, why: "the cluster is server/'s to wire: storage knows none of it"},
	{dir: "ledger", bad: []string{cluster, etcd}, why: "the cluster is server/'s to wire: ledger knows none of it"},
	{dir: "resolver", bad: []string{cluster, etcd}, why: "the cluster reaches the resolver through interfaces (cluster/node, txnmark): the resolver knows none of it"},
	{dir: "offsets", bad: []string{cluster, etcd}, why: "the offset mirror to etcd is an Options.Mirror hook (O8) filled by cluster/coord"},
	{dir: "kafka", bad: []string{cluster, etcd}, why: "kafka/ sees the cluster only through its Cluster and Catalog interfaces"},
	{dir: "auth", bad: []string{cluster, etcd}, why: "credentials in etcd are cluster/authstore's"},
	{dir: "metrics", bad: []string{cluster, etcd}, why: "metrics is fed by server/ through interfaces (no storage or protocol imports)"},
	{dir: "cluster", bad: []string{mod + "server", mod + "cmd", mod + "metrics"},
		why: "server/ wires the cluster packages; none of them reaches back up"},
	{dir: "cluster/etcdtest", bad: allModule, prodOnly: true,
		why: "etcdtest starts an embedded etcd for tests and knows nothing else"},
	{dir: "cluster/owner", bad: allModule, prodOnly: true,
		why: "ownership and fencing epochs (one owner at a time) are etcd alone: every cluster package builds on them"},
	{dir: "cluster/diskless", bad: allModule, allow: []string{cluster + "/owner"}, prodOnly: true,
		why: "the published copy is etcd ranges over blobs under an ownership; it knows no partition layer (tests use storage/objstore and test/s3server)"},
	{dir: "cluster/coord", bad: allModule, allow: []string{cluster + "/owner"}, prodOnly: true,
		why: "the coordinator mirror copies pebble batches to etcd under the coordinator ownership; offsets hands it batches (O8)"},
	{dir: "cluster/sharestate", bad: allModule, allow: []string{cluster + "/owner", mod + "offsets"}, prodOnly: true,
		why: "share state is offsets' records mirrored to etcd under an ownership"},
	{dir: "cluster/txnmark", bad: allModule, allow: []string{cluster + "/owner"}, prodOnly: true,
		why: "the marker relay reaches partitions through its own interface (wired in server/)"},
	{dir: "cluster/authstore", bad: allModule, allow: []string{mod + "auth"}, prodOnly: true,
		why: "SCRAM credentials in etcd: auth's types, nothing of the data path"},
	{dir: "cluster/catalog", bad: allModule, allow: []string{mod + "resolver", mod + "topicconfig"}, prodOnly: true,
		why: "the topic catalog in etcd applies its records through the resolver"},
	{dir: "cluster/etcdmeta", bad: allModule, allow: []string{mod + "storage", mod + "tier"}, prodOnly: true,
		why: "tier metadata in etcd implements tier's metadata interface"},
	{dir: "cluster/status", bad: allModule, allow: []string{cluster + "/owner", cluster + "/diskless", cluster + "/node", cluster + "/catalog"}, prodOnly: true,
		why: "cluster status only reads what the cluster packages keep in etcd, through their own decoders"},
	{dir: "cluster/node", bad: []string{cluster, mod + "offsets", mod + "kafka/", mod + "auth"},
		allow: []string{cluster + "/owner", cluster + "/diskless"}, prodOnly: true,
		why: "a node places and rebuilds partitions (rendezvous placement, rebuild before serving) over ownerships and the published copy, and serves kafka/'s Cluster interface; coordinators, catalog and relays are wired by server/"},
	{dir: "cmd/kgateway", bad: []string{mod + "storage", mod + "ledger", mod + "resolver", mod + "offsets", mod + "metrics", cluster},
		allow: []string{cluster + "/node", cluster + "/authstore"}, prodOnly: true,
		why: "cmd/kgateway builds the server only through server.Open, and inspects a data directory through server's read-only operations; it names cluster/node's Config and edits credentials in etcd (users) itself"},
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
				if under(p, r.allow) {
					continue
				}
				for _, bad := range r.bad {
					if p == bad || strings.HasPrefix(p, strings.TrimSuffix(bad, "/")+"/") {
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

// under reports whether p is one of paths or below one of them.
func under(p string, paths []string) bool {
	for _, a := range paths {
		if p == a || strings.HasPrefix(p, a+"/") {
			return true
		}
	}
	return false
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
