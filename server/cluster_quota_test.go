package server

import (
	"fmt"
	"os"
	"testing"

	"github.com/kgateway/kgateway/kafka/quota"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeUserQuota is alice's producer_byte_rate as node id describes
// it to user (0: none), or the request's error.
func (c *testCluster) describeUserQuota(id int32, user, pw string) (float64, error) {
	req := kmsg.NewPtrDescribeClientQuotasRequest()
	comp := kmsg.NewDescribeClientQuotasRequestComponent()
	comp.EntityType, comp.MatchType, comp.Match = quota.TypeUser, kmsg.QuotasMatchTypeExact, kmsg.StringPtr("alice")
	req.Components, req.Strict = append(req.Components, comp), true
	resp, err := c.onNode(id, user, pw, req)
	if err != nil {
		return 0, err
	}
	r := resp.(*kmsg.DescribeClientQuotasResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return 0, err
	}
	for _, e := range r.Entries {
		for _, v := range e.Values {
			if v.Key == quota.ProducerByteRate {
				return v.Value, nil
			}
		}
	}
	return 0, nil
}

// Client quotas in cluster mode are one etcd document (credentials and ACLs shared in etcd): set through
// one node, described by another and by a node restarted over its
// emptied data directory; without DESCRIBE_CONFIGS on the cluster they
// are refused CLUSTER_AUTHORIZATION_FAILED.
func TestClusterClientQuotasShared(t *testing.T) {
	c := secureCluster(t)
	c.start(1)
	c.start(2)
	req := kmsg.NewPtrAlterClientQuotasRequest()
	e := kmsg.NewAlterClientQuotasRequestEntry()
	ent := kmsg.NewAlterClientQuotasRequestEntryEntity()
	ent.Type, ent.Name = quota.TypeUser, kmsg.StringPtr("alice")
	op := kmsg.NewAlterClientQuotasRequestEntryOp()
	op.Key, op.Value = quota.ProducerByteRate, 1<<20
	e.Entity, e.Ops = append(e.Entity, ent), append(e.Ops, op)
	req.Entries = append(req.Entries, e)
	resp, err := c.onNode(1, "admin", "admin-pw", req)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.AlterClientQuotasResponse).Entries[0].ErrorCode; code != 0 {
		t.Fatalf("alter on node 1: %v", kerr.ErrorForCode(code))
	}
	eventually(t, "alice's quota set on node 1 described on node 2", func() error {
		v, err := c.describeUserQuota(2, "admin", "admin-pw")
		if err == nil && v != 1<<20 {
			err = fmt.Errorf("producer_byte_rate %v", v)
		}
		return err
	})
	if err := c.upsertUser(1, "bob", "bob-pw"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "bob refused", func() error {
		if _, err := c.describeUserQuota(2, "bob", "bob-pw"); err != kerr.ClusterAuthorizationFailed {
			return fmt.Errorf("bob describes quotas: %v, want CLUSTER_AUTHORIZATION_FAILED", err)
		}
		return nil
	})
	c.stop(2)
	c.start(2)
	if _, err := os.Stat(c.dirs[2] + "/" + quota.File); err == nil {
		t.Errorf("%s in a cluster node's data directory", quota.File)
	}
	if v, err := c.describeUserQuota(2, "admin", "admin-pw"); err != nil || v != 1<<20 {
		t.Fatalf("after a restart node 2 describes %v, %v", v, err)
	}
}
