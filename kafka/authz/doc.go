// Package authz is the authorization table (the authorizer's decisions, per-API authorization): per API key, the
// rule that checks a decoded request against the principal's ACLs before
// its handler runs, with Kafka's mapping of operations and resources
// (KafkaApis). A rule either answers the request itself (every resource
// it names is refused), or takes the refused resources out of the request
// and returns an "after" function that adds their errors to the
// handler's response; handlers thus see only what the principal may
// touch.
//
// What it owns: the rule of every API key (Lookup), which APIs fill
// authorized_operations without an authorizer (FillsOperations), the
// per-resource predicates handlers reuse (TopicAllowed, GroupAllowed),
// the error answers of refused group and transaction requests, and the
// coverage table that states, per API, how each kind of resource it names
// is authorized (checked against the wire types by its test).
//
// What it may not touch: the connection, the server, the resolver, the
// coordinators. A rule sees one request's rights and the topic catalog
// only through Request, which kafka/ implements over its connection
// (principal, peer host, the configured auth.Authorizer) and its
// resolver. It imports auth/ for the vocabulary of operations and
// resources, kmsg for the wire, and nothing of the data path.
package authz

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Rights is what a rule may ask of the principal of one request.
type Rights interface {
	// Allowed says whether the principal may perform op on the resource
	// (the authorizer's decisions); always true without an authorizer.
	Allowed(op auth.Operation, rt auth.ResourceType, name string) bool
	// Operations is the authorized_operations bit field of a resource.
	Operations(rt auth.ResourceType, name string) int32
	// Authorizing says whether an authorizer is configured at all.
	Authorizing() bool
	// AnyTopicWrite says whether the principal may WRITE some topic
	// (InitProducerId without a transactional id).
	AnyTopicWrite() bool
}

// Catalog is what a rule may ask of the topics: a rule that decides on a
// topic the request may create, or names by id, looks it up here.
type Catalog interface {
	// TopicExists says whether name is a topic (a companion view too).
	TopicExists(name string) bool
	// TopicByID names the topic of id, internal ones too.
	TopicByID(id [16]byte) (string, bool)
	// AutoCreateTopics is auto.create.topics.enable.
	AutoCreateTopics() bool
	// IsInternal says whether name is an internal topic (__consumer_offsets
	// and the like), which no request creates.
	IsInternal(name string) bool
}

// Request is one request's view for its rule: the principal's rights and
// the topic catalog.
type Request interface {
	Rights
	Catalog
}

// Rule checks one API's request. A non-nil answer is the response, and
// the handler does not run; else after (if non-nil) completes the
// handler's response.
type Rule func(rc Request, req kmsg.Request) (answer kmsg.Response, after func(kmsg.Response))

// Lookup is the rule of an API key; ok false for a key without one (the
// caller fails closed).
func Lookup(key int16) (Rule, bool) {
	r, ok := authzRules[key]
	return r, ok
}

// FillsOperations says whether the API's rule runs without an authorizer
// too: it fills authorized_operations (Metadata, DescribeGroups,
// DescribeCluster), and refuses nothing then.
func FillsOperations(key int16) bool { return fillsOperations[key] }

// OperationsNotRequested is what Kafka returns as authorized_operations
// when they were not asked for (or are not computed).
const OperationsNotRequested = -2147483648

// allowedCluster is Allowed on the one cluster resource.
func allowedCluster(rc Request, op auth.Operation) bool {
	return rc.Allowed(op, auth.ResourceCluster, auth.ClusterName)
}
