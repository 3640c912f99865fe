package acls

import (
	"errors"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Store is the ACL store the APIs read and change (*auth.ACLStore):
// Create and Delete are durable before they return (the durable ACL store).
type Store interface {
	Describe(auth.Filter) []auth.ACL
	Create([]auth.ACL) error
	Delete([]auth.Filter) ([][]auth.ACL, error)
}

// Refusal is the error of an ACL API before its content is looked at
// (SECURITY_DISABLED, CLUSTER_AUTHORIZATION_FAILED); the zero Refusal
// lets the request through.
type Refusal struct {
	Code    int16
	Message string
}

// Outcome is what a change did, for kafka/ to log: Stored is set when
// the store was called (some creation or filter was valid), Count is how
// many ACLs it created or deleted, Err why the store failed.
type Outcome struct {
	Stored bool
	Count  int
	Err    error
}

// Describe answers DescribeAcls (key 29): every ACL the filter selects
// (Kafka's ACL model: ANY matches every value, MATCH every pattern that applies to the
// named resource), grouped by resource pattern; a filter with an unknown
// field gets INVALID_REQUEST.
func Describe(st Store, r *kmsg.DescribeACLsRequest, no Refusal) *kmsg.DescribeACLsResponse {
	resp := r.ResponseKind().(*kmsg.DescribeACLsResponse)
	if no.Code != 0 {
		resp.ErrorCode, resp.ErrorMessage = no.Code, &no.Message
		return resp
	}
	f := auth.Filter{ResourceType: auth.ResourceType(r.ResourceType), ResourceName: r.ResourceName,
		PatternType: auth.PatternType(r.ResourcePatternType), Principal: r.Principal, Host: r.Host,
		Operation: auth.Operation(r.Operation), Permission: auth.Permission(r.PermissionType)}
	if err := f.Validate(); err != nil {
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, ptr(err.Error())
		return resp
	}
	byPattern := map[pattern]int{}
	for _, a := range st.Describe(f) {
		p := pattern{a.ResourceType, a.ResourceName, a.PatternType}
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
	return resp
}

// ErrUnknownFilter is a DescribeAcls or DeleteAcls filter naming an
// UNKNOWN (0) resource type, pattern type, operation or permission: Kafka
// fails to parse such a request (its normalizeAndValidate throws) and
// closes the connection, whoever sends it.
var ErrUnknownFilter = errors.New("kafka/acls: an ACL filter with an UNKNOWN element")

// unknownFilter says whether a filter names an UNKNOWN (0) element.
func unknownFilter(rt kmsg.ACLResourceType, pt kmsg.ACLResourcePatternType, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) bool {
	return rt == kmsg.ACLResourceTypeUnknown || pt == kmsg.ACLResourcePatternTypeUnknown ||
		op == kmsg.ACLOperationUnknown || perm == kmsg.ACLPermissionTypeUnknown
}

// DescribeRequest is Describe as a handler answers it: ErrUnknownFilter,
// for the connection to close, instead of an answer to a filter with an
// UNKNOWN element.
func DescribeRequest(st Store, r *kmsg.DescribeACLsRequest, no Refusal) (kmsg.Response, error) {
	if unknownFilter(r.ResourceType, r.ResourcePatternType, r.Operation, r.PermissionType) {
		return nil, ErrUnknownFilter
	}
	return Describe(st, r, no), nil
}

// DeleteRequest is Delete as a handler answers it: ErrUnknownFilter, for
// the connection to close, when any filter has an UNKNOWN element.
func DeleteRequest(st Store, r *kmsg.DeleteACLsRequest, no Refusal) (kmsg.Response, Outcome, error) {
	for _, f := range r.Filters {
		if unknownFilter(f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType) {
			return nil, Outcome{}, ErrUnknownFilter
		}
	}
	resp, o := Delete(st, r, no)
	return resp, o, nil
}

// pattern is a resource pattern: what Describe groups ACLs by.
type pattern struct {
	rt   auth.ResourceType
	name string
	pt   auth.PatternType
}

// Create answers CreateAcls (key 30). A creation Kafka cannot convert to
// an ACL fails the whole request (bindingFails). Each creation is checked
// as Kafka's controller does (Kafka's ACL model, the durable ACL store),
// else INVALID_REQUEST; the valid ones are
// stored together, durably, before the answer; creating an ACL that
// exists is a success. Beyond the store's bound every valid creation
// gets POLICY_VIOLATION.
func Create(st Store, r *kmsg.CreateACLsRequest, no Refusal) (*kmsg.CreateACLsResponse, Outcome) {
	resp := r.ResponseKind().(*kmsg.CreateACLsResponse)
	resp.Results = make([]kmsg.CreateACLsResponseResult, len(r.Creations))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewCreateACLsResponseResult()
		if no.Code != 0 {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = no.Code, &no.Message
		}
	}
	if no.Code != 0 {
		return resp, Outcome{}
	}
	if bindingFails(r.Creations) {
		for i := range resp.Results {
			resp.Results[i].ErrorCode = kerr.UnknownServerError.Code
		}
		return resp, Outcome{}
	}
	var valid []auth.ACL
	var at []int
	for i, c := range r.Creations {
		a := aclOf(c)
		if err := a.Validate(); err != nil {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.InvalidRequest.Code, ptr(err.Error())
			continue
		}
		valid, at = append(valid, a), append(at, i)
	}
	if len(valid) == 0 {
		return resp, Outcome{}
	}
	if err := st.Create(valid); err != nil {
		code := kerr.UnknownServerError.Code
		if errors.Is(err, auth.ErrTooManyACLs) {
			code = kerr.PolicyViolation.Code
		}
		for _, i := range at {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, ptr(err.Error())
		}
		return resp, Outcome{Stored: true, Err: err}
	}
	return resp, Outcome{Stored: true, Count: len(valid)}
}

// bindingFails says whether Kafka's AclApis fails the whole request
// converting its creations to AclBindings (CreateAclsRequest.aclBinding,
// all of them before any check): ResourcePattern's constructor refuses
// resource type ANY and pattern types MATCH and ANY, AccessControlEntry's
// operation ANY and permission ANY, with an IllegalArgumentException.
// The request's error answer gives every creation UNKNOWN_SERVER_ERROR,
// without a message (ApiError.fromThrowable keeps none for an unknown
// error), and nothing is stored.
func bindingFails(cs []kmsg.CreateACLsRequestCreation) bool {
	for _, c := range cs {
		if c.ResourceType == kmsg.ACLResourceTypeAny || c.ResourcePatternType == kmsg.ACLResourcePatternTypeMatch ||
			c.ResourcePatternType == kmsg.ACLResourcePatternTypeAny || c.Operation == kmsg.ACLOperationAny ||
			c.PermissionType == kmsg.ACLPermissionTypeAny {
			return true
		}
	}
	return false
}

func aclOf(c kmsg.CreateACLsRequestCreation) auth.ACL {
	return auth.ACL{ResourceType: auth.ResourceType(c.ResourceType), ResourceName: c.ResourceName,
		PatternType: auth.PatternType(c.ResourcePatternType), Principal: c.Principal, Host: c.Host,
		Operation: auth.Operation(c.Operation), Permission: auth.Permission(c.PermissionType)}
}

// Delete answers DeleteAcls (key 31): every ACL some valid filter selects
// (Kafka's ACL model) is removed, durably, before the answer (the durable ACL store); each filter's result
// lists the ACLs it selected. A filter with an unknown field gets
// INVALID_REQUEST.
func Delete(st Store, r *kmsg.DeleteACLsRequest, no Refusal) (*kmsg.DeleteACLsResponse, Outcome) {
	resp := r.ResponseKind().(*kmsg.DeleteACLsResponse)
	resp.Results = make([]kmsg.DeleteACLsResponseResult, len(r.Filters))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewDeleteACLsResponseResult()
		if no.Code != 0 {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = no.Code, &no.Message
		}
	}
	if no.Code != 0 {
		return resp, Outcome{}
	}
	var filters []auth.Filter
	var at []int
	for i, rf := range r.Filters {
		f := auth.Filter{ResourceType: auth.ResourceType(rf.ResourceType), ResourceName: rf.ResourceName,
			PatternType: auth.PatternType(rf.ResourcePatternType), Principal: rf.Principal, Host: rf.Host,
			Operation: auth.Operation(rf.Operation), Permission: auth.Permission(rf.PermissionType)}
		if err := f.Validate(); err != nil {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.InvalidRequest.Code, ptr(err.Error())
			continue
		}
		filters, at = append(filters, f), append(at, i)
	}
	if len(filters) == 0 {
		return resp, Outcome{}
	}
	matched, err := st.Delete(filters)
	if err != nil {
		for _, i := range at {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.UnknownServerError.Code, ptr(err.Error())
		}
		return resp, Outcome{Stored: true, Err: err}
	}
	n := 0
	for j, i := range at {
		for _, a := range matched[j] {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName = kmsg.ACLResourceType(a.ResourceType), a.ResourceName
			m.ResourcePatternType = kmsg.ACLResourcePatternType(a.PatternType)
			m.Principal, m.Host = a.Principal, a.Host
			m.Operation, m.PermissionType = kmsg.ACLOperation(a.Operation), kmsg.ACLPermissionType(a.Permission)
			resp.Results[i].MatchingACLs = append(resp.Results[i].MatchingACLs, m)
			n++
		}
	}
	return resp, Outcome{Stored: true, Count: n}
}

func ptr[T any](v T) *T { return &v }
