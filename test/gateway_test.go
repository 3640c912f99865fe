// Package test holds kgateway's end-to-end tests: real franz-go clients,
// kcat and the real binary against a real server on 127.0.0.1.
package test

import (
	"context"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/kafka/group"
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/kgateway/kgateway/kafka/txn"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/server"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testDeadline bounds every wait: a failure bound, never a way to let
// something happen.
const testDeadline = 30 * time.Second

// gatewayOptions tweak newGateway.
type gatewayOptions struct {
	listen        string // default 127.0.0.1:0
	numPartitions int32  // default 1
	noAutoCreate  bool
	advertised    string // advertised.listeners; default: what clients dialed
	// shutdownTimeout bounds srv.Close (default: the server's).
	shutdownTimeout time.Duration
	// group configures the group coordinator (default: Kafka's).
	group group.Config
	// txn configures the transaction coordinator (default: Kafka's).
	txn txn.Config
	// share configures the share-group coordinator (default: Kafka's).
	share share.Config
	// tailCacheBytes bounds storage's tail cache (0: its default).
	tailCacheBytes int64
	// maxRequestBytes and queuedMaxRequestBytes are
	// socket.request.max.bytes and queued.max.request.bytes (0: default).
	maxRequestBytes       int32
	queuedMaxRequestBytes int64
	// cleaner configures the log cleaner (default: Kafka's).
	cleaner resolver.CleanerConfig
	// objectStoreURL is object.store.url; tierInterval its task interval.
	objectStoreURL string
	tierInterval   time.Duration
	// tier configures the object tier (default: the server's).
	tier tier.Options
}

// gateway is a server (package server) in-process on one data dir.
type gateway struct {
	t    *testing.T
	dir  string
	opts gatewayOptions

	srv  *server.Server
	res  *resolver.Resolver // srv's layers, for tests that look inside
	offs *offsets.Store
	addr string
}

// newGateway starts a gateway on an ephemeral port over t.TempDir(); it is
// closed when the test ends.
func newGateway(t *testing.T) *gateway { return newGatewayWith(t, gatewayOptions{}) }

func newGatewayWith(t *testing.T, opts gatewayOptions) *gateway {
	t.Helper()
	g := &gateway{t: t, dir: t.TempDir(), opts: opts}
	g.start()
	t.Cleanup(g.stop)
	return g
}

func (g *gateway) start() {
	g.t.Helper()
	parts := g.opts.numPartitions
	if parts == 0 {
		parts = 1
	}
	listen := g.opts.listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	if g.addr != "" {
		listen = g.addr // a restart keeps the address clients know
	}
	g.srv = startServer(g.t, server.Config{
		DataDir:        g.dir,
		Listen:         listen,
		ObjectStoreURL: g.opts.objectStoreURL,
		Tier:           g.opts.tier,
		Storage:        storage.Options{TailCacheBytes: g.opts.tailCacheBytes},
		Resolver: resolver.Config{NumPartitions: parts, AutoCreate: !g.opts.noAutoCreate, Cleaner: g.opts.cleaner,
			TierInterval: g.opts.tierInterval},
		Kafka: kafka.Config{ShutdownTimeout: g.opts.shutdownTimeout, AdvertisedAddr: g.opts.advertised, Group: g.opts.group, Txn: g.opts.txn, Share: g.opts.share,
			MaxRequestBytes: g.opts.maxRequestBytes, QueuedMaxRequestBytes: g.opts.queuedMaxRequestBytes},
	})
	g.res, g.offs, g.addr = g.srv.Resolver(), g.srv.Offsets(), g.srv.Addr().String()
}

// startServer opens a server with cfg and serves it in the background.
func startServer(t *testing.T, cfg server.Config) *server.Server {
	t.Helper()
	s, err := server.Open(cfg)
	if err != nil {
		t.Fatalf("open server: %v", err)
	}
	go func() {
		if err := s.Serve(); err != nil {
			t.Errorf("serve: %v", err) // Close waits for Serve: the test is still running
		}
	}()
	return s
}

// stop closes the server (which closes its layers); idempotent.
func (g *gateway) stop() {
	if g.srv == nil {
		return
	}
	if err := g.srv.Close(); err != nil {
		g.t.Errorf("close server: %v", err)
	}
	g.srv, g.res, g.offs = nil, nil, nil
}

// restart closes everything and reopens the same data dir on the same
// address.
func (g *gateway) restart() {
	g.t.Helper()
	g.stop()
	g.start()
}

// client returns a franz-go client with default options (idempotent
// producer) plus opts, closed when the test ends.
func (g *gateway) client(opts ...kgo.Opt) *kgo.Client {
	g.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(g.addr)}, opts...)...)
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(cl.Close)
	return cl
}

func (g *gateway) admin() *kadm.Client { return kadm.NewClient(g.client()) }

// createTopic creates a topic with partitions partitions.
func (g *gateway) createTopic(name string, partitions int32) {
	g.t.Helper()
	ctx := testCtx(g.t)
	resp, err := g.admin().CreateTopic(ctx, partitions, 1, nil, name)
	if err != nil || resp.Err != nil {
		g.t.Fatalf("create topic %s: %v %v", name, err, resp.Err)
	}
}

// testCtx is a context bounded by testDeadline.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	t.Cleanup(cancel)
	return ctx
}

// request sends one raw request through cl at the highest version both
// sides support.
func request[R kmsg.Response](t *testing.T, cl *kgo.Client, req kmsg.Request) R {
	t.Helper()
	withTopicIDs(t, cl, req)
	resp, err := cl.Request(testCtx(t), req)
	if err != nil {
		t.Fatalf("request key %d: %v", req.Key(), err)
	}
	return resp.(R)
}

// withTopicIDs fills in the topic id of every topic req names by name
// only, for the versions that name topics by id (Produce v13,
// OffsetCommit and OffsetFetch v10, TxnOffsetCommit v6): franz-go sends
// the newest version both sides serve, and a name alone would not go on
// the wire. A name with no topic keeps the zero id (UNKNOWN_TOPIC_ID).
// Older versions do not encode ids, so a filled one changes nothing.
func withTopicIDs(t *testing.T, cl *kgo.Client, req kmsg.Request) {
	t.Helper()
	fill := func(name string, id *[16]byte) {
		if name == "" || *id != [16]byte{} {
			return
		}
		ts, err := kadm.NewClient(cl).ListTopics(testCtx(t), name)
		if err == nil && ts[name].Err == nil {
			*id = ts[name].ID
		}
	}
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		for i := range r.Topics {
			fill(r.Topics[i].Topic, &r.Topics[i].TopicID)
		}
	case *kmsg.OffsetCommitRequest:
		for i := range r.Topics {
			fill(r.Topics[i].Topic, &r.Topics[i].TopicID)
		}
	case *kmsg.TxnOffsetCommitRequest:
		for i := range r.Topics {
			fill(r.Topics[i].Topic, &r.Topics[i].TopicID)
		}
	case *kmsg.OffsetFetchRequest:
		for g := range r.Groups {
			for i := range r.Groups[g].Topics {
				fill(r.Groups[g].Topics[i].Topic, &r.Groups[g].Topics[i].TopicID)
			}
		}
	}
}
