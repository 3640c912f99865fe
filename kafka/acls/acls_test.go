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

// Creations as Kafka 4.4 answers them (test/kafkadiff's authz-acls): one
// Kafka cannot convert to an ACL (resource type ANY, pattern MATCH or
// ANY, operation ANY, permission ANY) fails the whole request with
// UNKNOWN_SERVER_ERROR and no message, storing nothing, even the valid
// creation beside it; an operation its resource type does not support
// (IDEMPOTENT_WRITE on a topic) is stored.
func TestCreateAsKafka(t *testing.T) {
	st, err := auth.OpenACLStore(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for what, change := range map[string]func(*kmsg.CreateACLsRequestCreation){
		"resource ANY":   func(c *kmsg.CreateACLsRequestCreation) { c.ResourceType = kmsg.ACLResourceTypeAny },
		"pattern MATCH":  func(c *kmsg.CreateACLsRequestCreation) { c.ResourcePatternType = kmsg.ACLResourcePatternTypeMatch },
		"pattern ANY":    func(c *kmsg.CreateACLsRequestCreation) { c.ResourcePatternType = kmsg.ACLResourcePatternTypeAny },
		"operation ANY":  func(c *kmsg.CreateACLsRequestCreation) { c.Operation = kmsg.ACLOperationAny },
		"permission ANY": func(c *kmsg.CreateACLsRequestCreation) { c.PermissionType = kmsg.ACLPermissionTypeAny },
	} {
		bad := creation("t", "User:a")
		change(&bad)
		cr := kmsg.NewPtrCreateACLsRequest()
		cr.Creations = []kmsg.CreateACLsRequestCreation{creation("t", "User:a"), bad}
		resp, o := Create(st, cr, Refusal{})
		for i, r := range resp.Results {
			if r.ErrorCode != kerr.UnknownServerError.Code || r.ErrorMessage != nil {
				t.Fatalf("%s: creation %d: code %d message %v, want UNKNOWN_SERVER_ERROR without one", what, i, r.ErrorCode, r.ErrorMessage)
			}
		}
		if o.Stored || len(st.ACLs()) != 0 {
			t.Fatalf("%s: stored %+v", what, st.ACLs())
		}
	}
	iw := creation("t", "User:a")
	iw.Operation = kmsg.ACLOperationIdempotentWrite
	cr := kmsg.NewPtrCreateACLsRequest()
	cr.Creations = []kmsg.CreateACLsRequestCreation{iw}
	if resp, o := Create(st, cr, Refusal{}); resp.Results[0].ErrorCode != 0 || o.Count != 1 {
		t.Fatalf("IDEMPOTENT_WRITE on a topic: code %d, outcome %+v", resp.Results[0].ErrorCode, o)
	}
}

// A DescribeAcls or DeleteAcls filter with an UNKNOWN (0) element is
// ErrUnknownFilter (the connection closes, as Kafka fails to parse it),
// before any refusal; known elements are answered.
func TestUnknownFilterCloses(t *testing.T) {
	st, err := auth.OpenACLStore(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	no := Refusal{Code: kerr.ClusterAuthorizationFailed.Code, Message: "no"}
	for i := range 4 {
		dr := kmsg.NewPtrDescribeACLsRequest()
		dr.ResourceType, dr.ResourcePatternType, dr.Operation, dr.PermissionType = topicFilter()
		del := kmsg.NewPtrDeleteACLsRequest()
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType = topicFilter()
		switch i {
		case 0:
			dr.ResourceType, f.ResourceType = kmsg.ACLResourceTypeUnknown, kmsg.ACLResourceTypeUnknown
		case 1:
			dr.ResourcePatternType, f.ResourcePatternType = kmsg.ACLResourcePatternTypeUnknown, kmsg.ACLResourcePatternTypeUnknown
		case 2:
			dr.Operation, f.Operation = kmsg.ACLOperationUnknown, kmsg.ACLOperationUnknown
		case 3:
			dr.PermissionType, f.PermissionType = kmsg.ACLPermissionTypeUnknown, kmsg.ACLPermissionTypeUnknown
		}
		del.Filters = []kmsg.DeleteACLsRequestFilter{kmsg.NewDeleteACLsRequestFilter(), f}
		del.Filters[0].ResourceType, del.Filters[0].ResourcePatternType, del.Filters[0].Operation, del.Filters[0].PermissionType = topicFilter()
		if resp, err := DescribeRequest(st, dr, no); err != ErrUnknownFilter || resp != nil {
			t.Fatalf("describe %d: %v %v", i, resp, err)
		}
		if resp, o, err := DeleteRequest(st, del, no); err != ErrUnknownFilter || resp != nil || o.Stored {
			t.Fatalf("delete %d: %v %+v %v", i, resp, o, err)
		}
	}
	dr := kmsg.NewPtrDescribeACLsRequest()
	dr.ResourceType, dr.ResourcePatternType, dr.Operation, dr.PermissionType = topicFilter()
	if resp, err := DescribeRequest(st, dr, Refusal{}); err != nil || resp.(*kmsg.DescribeACLsResponse).ErrorCode != 0 {
		t.Fatalf("known describe: %v %v", resp, err)
	}
}
