package kafka

// DescribeAcls (key 29), versions 1–3 (v0, without pattern types, was
// removed in Kafka 4; v2 flexible; v3 adds no field).
//
// Needs DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED). The filter
// selects ACLs as Kafka's AclBindingFilter (Kafka's ACL model): ANY matches every value,
// MATCH every pattern that applies to the named resource. The answer
// groups the ACLs by resource pattern. Without an authorizer:
// SECURITY_DISABLED; a filter with an unknown field: INVALID_REQUEST.

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDescribeAcls(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DescribeACLsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeACLsResponse)
	f := auth.Filter{ResourceType: auth.ResourceType(r.ResourceType), ResourceName: r.ResourceName,
		PatternType: auth.PatternType(r.ResourcePatternType), Principal: r.Principal, Host: r.Host,
		Operation: auth.Operation(r.Operation), Permission: auth.Permission(r.PermissionType)}
	if code, msg := aclAPIError(rc, auth.OpDescribe); code != 0 {
		resp.ErrorCode, resp.ErrorMessage = code, &msg
		return resp, nil
	}
	if err := f.Validate(); err != nil {
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, ptr(err.Error())
		return resp, nil
	}
	byPattern := map[aclPattern]int{}
	for _, a := range s.cfg.Authorizer.Store().Describe(f) {
		p := aclPattern{a.ResourceType, a.ResourceName, a.PatternType}
		i, ok := byPattern[p]
		if !ok {
			i = len(resp.Resources)
			byPattern[p] = i
			res := kmsg.NewDescribeACLsResponseResource()
			res.ResourceType, res.ResourceName = kmsg.ACLResourceType(p.rt), p.name
			res.ResourcePatternType = kmsg.ACLResourcePatternType(p.pt)
			resp.Resources = append(resp.Resources, res)
		}
		e := kmsg.NewDescribeACLsResponseResourceACL()
		e.Principal, e.Host = a.Principal, a.Host
		e.Operation, e.PermissionType = kmsg.ACLOperation(a.Operation), kmsg.ACLPermissionType(a.Permission)
		resp.Resources[i].ACLs = append(resp.Resources[i].ACLs, e)
	}
	return resp, nil
}

// aclPattern is a resource pattern: what DescribeAcls groups ACLs by.
type aclPattern struct {
	rt   auth.ResourceType
	name string
	pt   auth.PatternType
}

// aclAPIError is the error of an ACL API before its content is looked at:
// SECURITY_DISABLED without an authorizer, CLUSTER_AUTHORIZATION_FAILED
// without op on the cluster.
func aclAPIError(rc *reqCtx, op auth.Operation) (int16, string) {
	if rc.conn.s.cfg.Authorizer == nil {
		return kerr.SecurityDisabled.Code, "No Authorizer is configured (authorizer.class.name)"
	}
	if !rc.allowedCluster(op) {
		return kerr.ClusterAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Message
	}
	return 0, ""
}
