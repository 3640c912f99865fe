package main

// kgateway cluster status: the state of a cluster (cluster.etcd.endpoints,
// cluster.etcd.prefix, e.g. a node's --config) as its etcd holds it,
// through server.ClusterStatus. It only reads etcd: safe beside a
// running cluster, and it needs none of its nodes.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kgateway/kgateway/server"
	"go.uber.org/zap"
)

func clusterCmd(l loaded, stdout, _ io.Writer) error {
	if len(l.args) != 1 || l.args[0] != "status" {
		return usageError{fmt.Errorf("usage: kgateway cluster status --cluster-etcd-endpoints URL[,URL] [--cluster-etcd-prefix P], got %q", l.args)}
	}
	cc := l.cfg.clusterConfig(zap.NewNop())
	if cc == nil {
		return usageError{errors.New("cluster status needs cluster.etcd.endpoints")}
	}
	return server.ClusterStatus(context.Background(), *cc, stdout)
}

// splitWords takes the words (not flags, nor a flag's value) out of
// args.
func splitWords(args []string) (words, rest []string) {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") && (i == 0 || !needsValue(args[i-1])) {
			words = append(words, a)
			continue
		}
		rest = append(rest, a)
	}
	return words, rest
}
