package kafka

// AlterUserScramCredentials (key 51), version 0 (flexible): upserts and
// deletes SCRAM credentials in the credential store (the SCRAM credential store), each user's
// changes together or not at all (kafka/scram). Needs ALTER on the
// cluster (kafka/authz, per-API authorization).

import (
	"github.com/kgateway/kgateway/kafka/scram"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleAlterUserScramCredentials(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	resp, altered := scram.Alter(credentialStore(s), s.cfg.SASL.MaxUsers, req.(*kmsg.AlterUserSCRAMCredentialsRequest))
	for _, user := range altered {
		s.log.Info("scram-credentials-altered", zapUser(user), zapPrincipal(rc))
	}
	return resp, nil
}
