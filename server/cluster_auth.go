package server

import (
	"context"
	"fmt"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/cluster/authstore"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/kafka/quota"
)

// openClusterAuth keeps the credentials, the ACLs and the client quotas
// of a cluster in etcd (credentials and ACLs shared in etcd): the data directory is a cache emptied at start and no
// other node reads it. What kc already has (a test's own store) stays.
func (s *Server) openClusterAuth(kc *kafka.Config) error {
	n := s.cluster.node
	open := func(key string) (*authstore.Doc, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		d, err := authstore.Open(ctx, n.Client(), key, authstore.Options{Logger: named(nil, s.cfg.Logger, "auth")})
		if err != nil {
			return nil, err
		}
		s.cluster.authDocs = append(s.cluster.authDocs, d)
		return d, nil
	}
	if kc.SASL.Credentials == nil {
		d, err := open(authstore.ScramKey(n.Prefix()))
		if err != nil {
			return fmt.Errorf("cluster credentials: %w", err)
		}
		kc.SASL.Credentials = auth.NewSharedStore(d)
	}
	if kc.Quotas == nil {
		d, err := open(authstore.QuotaKey(n.Prefix()))
		if err != nil {
			return fmt.Errorf("cluster client quotas: %w", err)
		}
		if kc.Quotas, err = quota.NewSharedStore(d); err != nil {
			return fmt.Errorf("cluster client quotas: %w", err)
		}
	}
	if kc.Authorizer == nil && s.cfg.Authorizer.ClassName != "" {
		d, err := open(authstore.ACLKey(n.Prefix()))
		if err != nil {
			return fmt.Errorf("cluster ACLs: %w", err)
		}
		if kc.Authorizer, err = s.cfg.Authorizer.openShared(d); err != nil {
			return err
		}
	}
	return nil
}
