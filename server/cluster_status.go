package server

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kgateway/kgateway/cluster/node"
	"github.com/kgateway/kgateway/cluster/status"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// ClusterStatus prints the state of the cluster cc names, read from its
// etcd (cluster/status): nodes and their sessions, the coordinator's and
// every partition's owner and epoch, and the upload, merge and
// collection backlogs. It writes nothing and needs no node running.
func ClusterStatus(ctx context.Context, cc node.Config, w io.Writer) error {
	st, err := ReadClusterStatus(ctx, cc)
	if err != nil {
		return err
	}
	return st.Write(w)
}

// ReadClusterStatus is ClusterStatus's reading, for callers that look at
// the fields (tests, tools).
func ReadClusterStatus(ctx context.Context, cc node.Config) (status.Status, error) {
	if len(cc.Endpoints) == 0 {
		return status.Status{}, fmt.Errorf("cluster status: no etcd endpoints (cluster.etcd.endpoints)")
	}
	prefix := cc.Prefix
	if prefix == "" {
		prefix = node.DefaultPrefix
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: cc.Endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return status.Status{}, fmt.Errorf("cluster status: etcd: %w", err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return status.Read(ctx, cli, prefix)
}
