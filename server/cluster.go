package server

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/kgateway/kgateway/cluster/authstore"
	"github.com/kgateway/kgateway/cluster/catalog"
	"github.com/kgateway/kgateway/cluster/coord"
	"github.com/kgateway/kgateway/cluster/diskless"
	"github.com/kgateway/kgateway/cluster/node"
	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/cluster/sharestate"
	"github.com/kgateway/kgateway/cluster/txnmark"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/storage/objstore"
	"go.uber.org/zap"
)

// errNotCoordinator refuses offsets writes on a node that does not hold
// the coordinator role: the front end routes none there, and a write
// that gets there anyway must not land in a store no one restores.
var errNotCoordinator = errors.New("cluster: this node is not the group coordinator")

// clusterParts are the layers of cluster mode (node.Parts plus what the
// server closes).
type clusterParts struct {
	node *node.Node
	cat  *catalog.Catalog
	dl   *diskless.Committer
	txn  *txnmark.Relay
	// authDocs are the credentials' and the ACLs' documents (credentials and ACLs shared in etcd).
	authDocs []*authstore.Doc
	// share keeps share-partition states (share groups in cluster mode); set before serving.
	share *sharestate.Store

	mu      sync.Mutex
	offs    *offsets.Store // the coordinator's store, swapped in by becomeCoordinator
	offsDir string         // its directory
}

// openClusterBase opens what storage needs before it opens in cluster
// mode: the emptied data directory (the data directory as a cache) and the node's etcd session.
func (s *Server) openClusterBase() error {
	cc := *s.cfg.Cluster
	if s.cfg.ObjectStoreURL == "" {
		return errors.New("cluster mode needs object.store.url")
	}
	if err := node.PrepareDataDir(s.cfg.DataDir); err != nil {
		return err
	}
	cc.Logger = named(cc.Logger, s.cfg.Logger, "cluster")
	s.metrics.EnableCluster()
	if cc.Observer == nil {
		cc.Observer = s.metrics
	}
	n, err := node.Open(cc)
	if err != nil {
		return err
	}
	s.cluster = &clusterParts{node: n}
	b, err := objstore.Open(context.Background(), s.cfg.ObjectStoreURL)
	if err != nil {
		return fmt.Errorf("open object store: %w", err)
	}
	if s.cfg.wrapBucket != nil {
		b = s.cfg.wrapBucket(b)
	}
	s.bucket = b
	s.cluster.dl = diskless.New(n.Client(), n.Owners(), b, n.Prefix(), n.Name(), diskless.Options{Observer: s.metrics})
	return nil
}

// clusterResolver sets what the resolver does differently in a cluster.
func (s *Server) clusterResolver(rc *resolver.Config) {
	n := s.cluster.node
	rc.Diskless = true
	rc.ProducerIDs = coord.ProducerIDs(n.Client(), n.Prefix(), 1000)
}

// openClusterCatalog starts the shared catalog over the open resolver.
func (s *Server) openClusterCatalog() error {
	n := s.cluster.node
	dl := s.cluster.dl
	cat, err := catalog.New(n.Client(), n.Prefix(), s.res, catalog.Options{
		NodeID: s.cfg.Kafka.NodeID, // the BROKER resource this node answers for
		OnDelete: func(id resolver.TopicID, partitions int32) {
			keys := make([]string, partitions)
			for i := range keys {
				keys[i] = node.PKey(id, int32(i))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := dl.DeletePartitions(ctx, keys); err != nil {
				s.cfg.Logger.Warn("cluster-delete-partitions-failed", zap.Error(err))
			}
			if err := s.cluster.share.DeletePartitions(ctx, keys); err != nil { // The share-state admin reset
				s.cfg.Logger.Warn("cluster-delete-share-states-failed", zap.Error(err))
			}
			n.Kick()
		},
	})
	if err != nil {
		return err
	}
	s.cluster.cat = cat
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return cat.Start(ctx)
}

// clusterTxn gives the transaction coordinator the relay to the
// partitions' leaders (the transaction relay): registrations and markers go through etcd;
// producer ids still come from the resolver (etcd blocks, producer id blocks).
func (s *Server) clusterTxn(kc *kafka.Config) {
	n := s.cluster.node
	exists := func(topic string, partition int32) bool {
		t, ok := s.res.Topic(topic)
		return ok && partition >= 0 && partition < t.Partitions
	}
	s.cluster.txn = txnmark.New(n.Client(), n.Owners, n.Prefix(), s.res, n.Serving, txnmark.Options{
		Logger: named(nil, s.cfg.Logger, "txnmark"), Exists: exists})
	kc.Txn.Partitions = clusterTxnParts{Relay: s.cluster.txn, res: s.res}
	if s.cfg.wrapTxnParts != nil {
		kc.Txn.Partitions = s.cfg.wrapTxnParts(kc.Txn.Partitions)
	}
}

// clusterTxnParts is kafka/txn's Partitions in a cluster.
type clusterTxnParts struct {
	*txnmark.Relay
	res *resolver.Resolver
}

func (p clusterTxnParts) AllocateProducerID(ctx context.Context) (int64, error) {
	return p.res.AllocateProducerID(ctx)
}

// WriteTxnMarkers is kafka/txn's MarkerBatcher: one transaction's markers
// through the relay at once (one decision transaction, direct markers).
func (p clusterTxnParts) WriteTxnMarkers(pid int64, epoch int16, commit bool, _ int32, tps []offsets.TopicPartition) []error {
	parts := make([]txnmark.Partition, len(tps))
	for i, tp := range tps {
		parts[i] = txnmark.Partition{Topic: tp.Topic, Partition: tp.Partition}
	}
	return p.Relay.WriteTxnMarkers(pid, epoch, commit, parts)
}

// openClusterOffsets opens the store a node serves until it becomes the
// coordinator: empty, and refusing every write.
func (s *Server) openClusterOffsets(oo offsets.Options) (*offsets.Store, error) {
	oo.Mirror = func(*pebble.Batch) error { return errNotCoordinator }
	return offsets.Open(filepath.Join(s.cfg.DataDir, "offsets-idle"), oo)
}

// becomeCoordinator restores the group state from etcd into a fresh
// store, mirrored under o, and swaps it into the front end (the coordinator role).
func (s *Server) becomeCoordinator(ctx context.Context, o owner.Ownership) error {
	n := s.cluster.node
	dir := filepath.Join(s.cfg.DataDir, "offsets-"+strconv.FormatUint(o.Epoch, 10))
	if err := coord.Restore(ctx, n.Client(), n.Prefix(), dir); err != nil {
		return err
	}
	oo := s.cfg.Offsets
	oo.Logger = named(oo.Logger, s.cfg.Logger, "offsets")
	oo.Mirror = coord.NewMirror(n.Client(), n.Owners(), o, n.Prefix(), coord.Options{})
	// Etcd holds the coordinator's durable state: dir is restored anew
	// at every acquisition and never reopened, so its writes need no sync.
	oo.MirrorDurable = true
	st, err := offsets.Open(dir, oo)
	if err != nil {
		return err
	}
	s.cluster.txn.SetCoordinator(o) // Coordinator-fenced records: before the restored coordinator completes anything
	old := s.kafka.SwapOffsets(st)
	s.cluster.mu.Lock()
	s.cluster.offs = st
	oldDir := s.cluster.offsDir
	s.cluster.offsDir = dir
	s.cluster.mu.Unlock()
	if old != nil && old != s.offs {
		old.Close()
		// A former coordinator store is never read again: the next
		// acquisition restores from etcd.
		if err := os.RemoveAll(oldDir); err != nil {
			s.cfg.Logger.Warn("cluster-remove-offsets-failed", zap.String("dir", oldDir), zap.Error(err))
		}
	}
	return nil
}

// startCluster registers the node at its advertised address and starts
// placing partitions; the listeners are bound.
func (s *Server) startCluster() error {
	host, port, err := s.advertised()
	if err != nil {
		return err
	}
	s.cluster.txn.Start()
	return s.cluster.node.Start(kafka.Broker{Host: host, Port: port}, node.Parts{
		Resolver:          s.res,
		Diskless:          s.cluster.dl,
		Catalog:           s.cluster.cat,
		BecomeCoordinator: s.becomeCoordinator,
		Txn:               s.cluster.txn,
	})
}

// advertised is the address other nodes' clients are told to dial for
// this node: the first listener's advertised address, else its bound one.
func (s *Server) advertised() (string, int32, error) {
	addr := ""
	if len(s.lis) > 0 {
		addr = s.lis[0].Advertised
	}
	if addr == "" && len(s.lns) > 0 {
		addr = s.lns[0].Addr().String()
	}
	if addr == "" {
		return "", 0, errors.New("cluster mode needs a listener")
	}
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		return "", 0, err
	}
	return host, int32(port), nil
}

// leaveCluster hands this node's partitions over before the front end
// stops (graceful handover).
func (s *Server) leaveCluster() {
	if s.cluster == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.cluster.node.Leave(ctx)
}

func (s *Server) closeCluster() error {
	if s.cluster == nil {
		return nil
	}
	var errs []error
	if s.cluster.txn != nil {
		s.cluster.txn.Close()
	}
	if s.cluster.cat != nil {
		errs = append(errs, s.cluster.cat.Close())
	}
	for _, d := range s.cluster.authDocs {
		errs = append(errs, d.Close())
	}
	s.cluster.mu.Lock()
	if st := s.cluster.offs; st != nil {
		errs = append(errs, st.Close())
	}
	s.cluster.mu.Unlock()
	return errors.Join(append(errs, s.cluster.node.Close())...)
}

// clusterShare gives share groups their durable home in etcd
// (cluster/sharestate, share groups in cluster mode): each share-partition state is written
// by the partition's leader under its ownership.
func (s *Server) clusterShare(kc *kafka.Config) {
	n := s.cluster.node
	s.cluster.share = sharestate.New(sharestate.Options{
		Client: n.Client(), Owners: n.Owners(), Prefix: n.Prefix(),
		Serving: n.ServingKey, Topics: sharePKeys{s.res}, CoordinatorKey: node.CoordinatorKey,
	})
	kc.Share.States = s.cluster.share
}

// sharePKeys maps partitions to their etcd pkeys (node.PKey) and back.
type sharePKeys struct{ res *resolver.Resolver }

func (k sharePKeys) PKey(topic string, partition int32) (string, bool) {
	t, ok := k.res.Topic(topic)
	if !ok || partition < 0 || partition >= t.Partitions {
		return "", false
	}
	return node.PKey(t.ID, partition), true
}

func (k sharePKeys) Partition(pkey string) (offsets.TopicPartition, bool) {
	idHex, idx, ok := strings.Cut(pkey, "-")
	if !ok {
		return offsets.TopicPartition{}, false
	}
	raw, err := hex.DecodeString(idHex)
	p, perr := strconv.ParseInt(idx, 10, 32)
	if err != nil || perr != nil || len(raw) != len(resolver.TopicID{}) {
		return offsets.TopicPartition{}, false
	}
	t, ok := k.res.TopicByID(resolver.TopicID(raw))
	if !ok || int32(p) >= t.Partitions {
		return offsets.TopicPartition{}, false
	}
	return offsets.TopicPartition{Topic: t.Name, Partition: int32(p)}, true
}

// clusterID gives kc the cluster's shared id, unless one is configured:
// each node's data directory has its own, and a cluster whose nodes
// reported different ids would send clients that check it (ApiVersions
// v5, KIP-1242) back to their seeds on every other node.
func (s *Server) clusterID(kc *kafka.Config) error {
	if kc.ClusterID != "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := s.cluster.node.SharedClusterID(ctx, s.res.ClusterID())
	if err != nil {
		return err
	}
	kc.ClusterID = id
	return nil
}
