package acls

import (
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func creation(topic, principal string) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName = kmsg.ACLResourceTypeTopic, topic
	c.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
	c.Principal, c.Host = principal, "*"
	c.Operation, c.PermissionType = kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
	return c
}

func topicFilter() (rt kmsg.ACLResourceType, pt kmsg.ACLResourcePatternType, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) {
	return kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
}

// TestCreateDescribeDelete runs the three APIs over a real store: an
// invalid creation gets INVALID_REQUEST alone, the valid ones are stored
// and described grouped by resource pattern, and a delete lists what it
// removed.
func TestCreateDescribeDelete(t *testing.T) {
	st, err := auth.OpenACLStore(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	cr := kmsg.NewPtrCreateACLsRequest()
	bad := creation("t", "no-colon")
	cr.Creations = []kmsg.CreateACLsRequestCreation{creation("t", "User:a"), bad, creation("t", "User:b"), creation("u", "User:a")}
	resp, o := Create(st, cr, Refusal{})
	if o.Err != nil || !o.Stored || o.Count != 3 {
		t.Fatalf("create outcome %+v", o)
	}
	for i, r := range resp.Results {
		if want := map[bool]int16{true: kerr.InvalidRequest.Code}[i == 1]; r.ErrorCode != want {
			t.Fatalf("creation %d: code %d, want %d", i, r.ErrorCode, want)
		}
	}

	dr := kmsg.NewPtrDescribeACLsRequest()
	dr.ResourceType, dr.ResourcePatternType, dr.Operation, dr.PermissionType = topicFilter()
	d := Describe(st, dr, Refusal{})
	if d.ErrorCode != 0 || len(d.Resources) != 2 {
		t.Fatalf("describe: code %d, %d resources, want 2", d.ErrorCode, len(d.Resources))
	}
	if d.Resources[0].ResourceName != "t" || len(d.Resources[0].ACLs) != 2 || len(d.Resources[1].ACLs) != 1 {
		t.Fatalf("describe grouped wrongly: %+v", d.Resources)
	}

	del := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType = topicFilter()
	f.ResourceName = kmsg.StringPtr("t")
	del.Filters = []kmsg.DeleteACLsRequestFilter{f}
	dresp, o := Delete(st, del, Refusal{})
	if o.Err != nil || o.Count != 2 || len(dresp.Results[0].MatchingACLs) != 2 {
		t.Fatalf("delete outcome %+v, results %+v", o, dresp.Results)
	}
	if left := st.ACLs(); len(left) != 1 || left[0].ResourceName != "u" {
		t.Fatalf("left after delete: %+v", left)
	}
}

// TestRefusal answers every creation and filter with the refusal and
// reaches no store.
func TestRefusal(t *testing.T) {
	no := Refusal{Code: kerr.SecurityDisabled.Code, Message: "off"}
	cr := kmsg.NewPtrCreateACLsRequest()
	cr.Creations = []kmsg.CreateACLsRequestCreation{creation("t", "User:a"), creation("u", "User:a")}
	resp, o := Create(nil, cr, no)
	if o.Stored || resp.Results[0].ErrorCode != no.Code || resp.Results[1].ErrorCode != no.Code {
		t.Fatalf("create refused: %+v %+v", o, resp.Results)
	}
	d := Describe(nil, kmsg.NewPtrDescribeACLsRequest(), no)
	if d.ErrorCode != no.Code || *d.ErrorMessage != "off" {
		t.Fatalf("describe refused: %d", d.ErrorCode)
	}
	del := kmsg.NewPtrDeleteACLsRequest()
	del.Filters = make([]kmsg.DeleteACLsRequestFilter, 1)
	dresp, o := Delete(nil, del, no)
	if o.Stored || dresp.Results[0].ErrorCode != no.Code {
		t.Fatalf("delete refused: %+v", o)
	}
}
