package authz

import (
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Broker loggers (BROKER_LOGGER resources) are authorized on the cluster,
// as in Kafka: DESCRIBE_CONFIGS to describe them, ALTER_CONFIGS to change
// them; a topic's rights do not reach them.
func TestBrokerLoggerAuthzRules(t *testing.T) {
	describe := func(rc Request) int16 {
		r := kmsg.NewPtrDescribeConfigsRequest()
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, "0"
		r.Resources = append(r.Resources, rr)
		_, after := authzDescribeConfigs(rc, r)
		if after == nil {
			return 0
		}
		resp := r.ResponseKind()
		after(resp)
		return resp.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode
	}
	alter := func(rc Request) int16 {
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, "0"
		r.Resources = append(r.Resources, rr)
		_, after := authzIncrementalAlterConfigs(rc, r)
		if after == nil {
			return 0
		}
		resp := r.ResponseKind()
		after(resp)
		return resp.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode
	}
	caf := kerr.ClusterAuthorizationFailed.Code
	clusterDescribe := acl(auth.ResourceCluster, auth.ClusterName, auth.OpDescribeConfigs)
	clusterAlter := acl(auth.ResourceCluster, auth.ClusterName, auth.OpAlterConfigs)
	topicAll := acl(auth.ResourceTopic, "t", auth.OpAll)
	for _, c := range []struct {
		name string
		try  func(Request) int16
		acls []auth.ACL
		want int16
	}{
		{"describe/none", describe, nil, caf},
		{"describe/topic", describe, []auth.ACL{topicAll}, caf},
		{"describe/cluster DESCRIBE_CONFIGS", describe, []auth.ACL{clusterDescribe}, 0},
		{"alter/cluster DESCRIBE_CONFIGS", alter, []auth.ACL{clusterDescribe}, caf},
		{"alter/cluster ALTER_CONFIGS", alter, []auth.ACL{clusterAlter}, 0},
	} {
		if got := c.try(authzConn(t, "User:alice", c.acls...)); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, kerr.ErrorForCode(got), kerr.ErrorForCode(c.want))
		}
	}
}
