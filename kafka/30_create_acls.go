package kafka

// CreateAcls (key 30), versions 1–3 (v2 flexible).
//
// Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED per creation).
// Each creation is checked as Kafka's controller does (Kafka's ACL model, the durable ACL store) and the
// valid ones are stored together, durably, before the answer
// (kafka/acls). Without an authorizer: SECURITY_DISABLED.

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/acls"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleCreateAcls(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	resp, o := acls.Create(aclStore(s), req.(*kmsg.CreateACLsRequest), aclAPIError(rc, auth.OpAlter))
	logACLChange(s, rc, "create", o)
	return resp, nil
}
