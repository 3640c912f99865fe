package server

import (
	"context"
	"fmt"
	"time"

	"github.com/kgateway/kgateway/cluster/authstore"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/kafka/token"
)

// openTokens gives the Kafka front end its delegation tokens (KIP-48):
// kept in DataDir, or in a cluster in one etcd document every node
// follows, as the SCRAM credentials are. Tokens are served (and answer
// DELEGATION_TOKEN_AUTH_DISABLED) without a secret too. What kc already
// has (a test's own manager) stays.
func (s *Server) openTokens(kc *kafka.Config) error {
	if kc.SASL.Tokens != nil {
		return nil
	}
	var (
		doc token.Doc
		err error
	)
	if s.cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n := s.cluster.node
		d, err := authstore.Open(ctx, n.Client(), authstore.TokenKey(n.Prefix()), authstore.Options{Logger: named(nil, s.cfg.Logger, "auth")})
		if err != nil {
			return fmt.Errorf("cluster delegation tokens: %w", err)
		}
		s.cluster.authDocs = append(s.cluster.authDocs, d) // closed with them
		doc = d
	} else if doc, err = token.OpenFile(s.cfg.DataDir); err != nil {
		return fmt.Errorf("delegation tokens: %w", err)
	}
	if kc.SASL.Tokens, err = token.New(s.cfg.Tokens, doc); err != nil {
		return err
	}
	s.tokens = kc.SASL.Tokens
	s.tokens.Start(s.cfg.Tokens.ExpiryCheck)
	return nil
}
