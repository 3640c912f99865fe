package main

import (
	"github.com/kgateway/kgateway/logging"
	"strings"
	"time"

	"github.com/kgateway/kgateway/cluster/node"
	"go.uber.org/zap"
)

// validateCluster checks the cluster-mode settings.
func (c Config) validateCluster(bad func(prop, format string, args ...any)) {
	if c.NodeID < 0 {
		bad("node.id", "%d must not be negative", c.NodeID)
	}
	if c.ClusterEtcdEndpoints == "" {
		return
	}
	if c.ObjectStoreURL == "" {
		bad("object.store.url", "a cluster (cluster.etcd.endpoints) keeps its partitions in an object store: set object.store.url")
	}
	if c.ClusterCommitMs < 0 {
		bad("cluster.commit.interval.ms", "%d must not be negative", c.ClusterCommitMs)
	}
	if c.ClusterCommitDepth < 1 {
		bad("cluster.commit.depth", "%d must be at least 1", c.ClusterCommitDepth)
	}
	if c.ClusterSessionMs < 1000 {
		bad("cluster.session.timeout.ms", "%d must be at least 1000", c.ClusterSessionMs)
	}
	if c.ClusterStateMs < 1 {
		bad("cluster.producer.state.interval.ms", "%d must be at least 1", c.ClusterStateMs)
	}
	if c.ClusterRebuildBytes < -1 {
		bad("cluster.cache.rebuild.bytes", "%d must be -1 (the whole partition) or more", c.ClusterRebuildBytes)
	}
	if !strings.HasPrefix(c.ClusterEtcdPrefix, "/") {
		bad("cluster.etcd.prefix", "%q must start with /", c.ClusterEtcdPrefix)
	}
}

// clusterConfig is the node's configuration; nil without
// cluster.etcd.endpoints (a single node).
func (c Config) clusterConfig(log *zap.Logger) *node.Config {
	if c.ClusterEtcdEndpoints == "" {
		return nil
	}
	prefix := c.ClusterEtcdPrefix
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return &node.Config{
		NodeID:            c.NodeID,
		Endpoints:         splitList(c.ClusterEtcdEndpoints),
		Prefix:            prefix,
		SessionTimeout:    time.Duration(c.ClusterSessionMs) * time.Millisecond,
		CommitInterval:    time.Duration(c.ClusterCommitMs) * time.Millisecond,
		CommitDepth:       c.ClusterCommitDepth,
		CacheRebuildBytes: rebuildBytes(c.ClusterRebuildBytes),
		StateInterval:     time.Duration(c.ClusterStateMs) * time.Millisecond,
		Logger:            logging.Named(log, "cluster"),
	}
}

// rebuildBytes is cluster.cache.rebuild.bytes for node.Config, where 0
// is the default: the setting's 0 (copy nothing) becomes 1, which no
// range fits (a record batch is 61 bytes or more).
func rebuildBytes(v int64) int64 {
	if v == 0 {
		return 1
	}
	return v
}
