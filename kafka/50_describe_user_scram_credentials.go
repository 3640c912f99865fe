package kafka

// DescribeUserScramCredentials (key 50), version 0 (flexible): users'
// SCRAM mechanisms and iterations from the credential store (the SCRAM credential store;
// kafka/scram). Left out: authorization (DESCRIBE on the cluster).

import (
	"github.com/kgateway/kgateway/kafka/scram"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDescribeUserScramCredentials(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	resp, err := scram.Describe(credentialStore(s), req.(*kmsg.DescribeUserSCRAMCredentialsRequest))
	if err != nil {
		s.log.Warn("credential-store-read-failed")
	}
	return resp, nil
}

// credentialStore is the SCRAM credential store; nil without one.
func credentialStore(s *Server) scram.Store {
	if s.cfg.SASL.Credentials == nil {
		return nil
	}
	return s.cfg.SASL.Credentials
}

func ptr[T any](v T) *T { return &v }
