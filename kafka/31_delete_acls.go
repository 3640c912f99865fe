package kafka

// DeleteAcls (key 31), versions 1–3 (v2 flexible).
//
// Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED per filter; no authorizer: SECURITY_DISABLED).
// Every ACL some valid filter selects (Kafka's ACL model) is removed, durably, before the answer (the
// durable ACL store; kafka/acls); a filter with an UNKNOWN element closes the connection (Kafka's parse).

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/acls"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDeleteAcls(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	resp, o, err := acls.DeleteRequest(aclStore(s), req.(*kmsg.DeleteACLsRequest), aclAPIError(rc, auth.OpAlter))
	logACLChange(s, rc, "delete", o)
	return resp, err
}
