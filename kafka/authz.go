package kafka

// Authorization at dispatch (the authorizer's decisions, per-API authorization). With an authorizer configured, each
// request passes its API's rule (kafka/authz) before its handler: a
// rule either answers the request itself (every resource it names is
// refused), or takes the refused resources out of the request and returns
// an "after" function that adds their errors to the handler's response.
// Handlers thus see only what the principal may touch; a handler that
// finds resources of its own (a fetch session's partitions) asks
// rc.allowed.

import (
	"fmt"
	"net"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/authz"
	"github.com/kgateway/kgateway/kafka/fetch"
	"github.com/kgateway/kgateway/kafka/topicid"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// authorize runs the request's rule (per-API authorization). Without an authorizer nothing is
// refused, but authorized_operations are still filled when asked (every
// supported operation, as Kafka does without an authorizer).
func (s *Server) authorize(rc *reqCtx, req kmsg.Request) (kmsg.Response, func(kmsg.Response), error) {
	if s.cfg.Authorizer == nil && !authz.FillsOperations(rc.key) {
		return nil, nil, nil
	}
	rule, ok := authz.Lookup(rc.key)
	if !ok {
		// Every API has a rule (TestEveryAPIHasAnAuthzRule); fail closed
		// should one be added without: the connection closes (a Go error closes the connection).
		return nil, nil, fmt.Errorf("kafka: no authorization rule for %s", apiName(rc.key))
	}
	answer, after := rule(rights{rc}, req)
	return answer, after, nil
}

// authorizedHandle runs the request's rule, then its handler unless the
// rule answered, then the rule's completion of the handler's response. A
// group request on a node that does not coordinate groups is answered
// NOT_COORDINATOR in place of the handler (coordinator routing), after authorization as
// in Kafka.
// Topics named by id (Produce v13, OffsetCommit v10, OffsetFetch v10,
// TxnOffsetCommit v6) are named by name for both (kafka/topicid), and
// given their ids back in the response.
func (s *Server) authorizedHandle(a api, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	ids := topicid.Translate(req, topicLookup{s})
	if ids == nil {
		return s.authorizedHandleNamed(a, rc, req)
	}
	if pr, ok := req.(*kmsg.ProduceRequest); ok && pr.Acks == 0 && ids.Unknown {
		// acks=0 with an unknown topic id: as for any failed acks=0
		// produce, the connection closes so that the producer notices.
		return nil, fmt.Errorf("kafka: %s without a response names an unknown topic id", apiName(rc.key))
	}
	ids.Outranked(unknownIDOutranked(rc, req))
	resp, err := req.ResponseKind(), error(nil)
	if !ids.NoneKnown {
		resp, err = s.authorizedHandleNamed(a, rc, req)
	}
	ids.Complete(resp)
	return resp, err
}

// unknownIDOutranked is the request-level refusal Kafka answers every
// topic with before it resolves topic ids, 0 if none: a transactional
// batch without a transactional id, or a transactional id or group the
// principal may not use (Produce, OffsetCommit, TxnOffsetCommit).
func unknownIDOutranked(rc *reqCtx, req kmsg.Request) int16 {
	txnRefused := func(id string) bool { return !rc.allowed(auth.OpWrite, auth.ResourceTransactionalID, id) }
	groupRefused := func(g string) bool { return !groupAllowed(rc, auth.OpRead, g) }
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		if (r.TransactionID == nil && anyTransactional(r)) || (r.TransactionID != nil && txnRefused(*r.TransactionID)) {
			return kerr.TransactionalIDAuthorizationFailed.Code
		}
	case *kmsg.OffsetCommitRequest:
		if groupRefused(r.Group) {
			return kerr.GroupAuthorizationFailed.Code
		}
	case *kmsg.TxnOffsetCommitRequest:
		if txnRefused(r.TransactionalID) {
			return kerr.TransactionalIDAuthorizationFailed.Code
		}
		if groupRefused(r.Group) {
			return kerr.GroupAuthorizationFailed.Code
		}
	}
	return 0
}

func (s *Server) authorizedHandleNamed(a api, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	if off := s.featureOff(req); off != nil {
		return off, nil // a group protocol turned off, checked first as in Kafka
	}
	answer, after, err := s.authorize(rc, req)
	if err != nil || answer != nil {
		return answer, err
	}
	resp := s.notCoordinator(rc.key, req) // Coordinator routing
	if resp == nil {
		resp, err = a.handle(s, rc, req)
	}
	if err == nil && resp != nil && after != nil {
		after(resp)
	}
	if err == nil && resp == nil && after != nil {
		// A response-less request (Produce with acks=0, no response for acks=0) with some
		// of it refused: like any failed acks=0 produce, Kafka closes
		// the connection so that the producer notices at all.
		return nil, fmt.Errorf("kafka: %s without a response refused", apiName(rc.key))
	}
	return resp, err
}

// allowed says whether the connection's principal may perform op on the
// resource (the authorizer's decisions); always true without an authorizer.
func (rc *reqCtx) allowed(op auth.Operation, rt auth.ResourceType, name string) bool {
	az := rc.conn.s.cfg.Authorizer
	if az == nil {
		return true
	}
	principal, host := rc.conn.Principal(), rc.conn.peerHost()
	name = rc.authzName(op, rt, name)
	ok := az.Authorize(principal, host, op, rt, name)
	if !ok {
		// Debug: an all-topics Metadata checks (and hides) every topic.
		rc.conn.log.Debug("authorization-denied", zap.String("principal", principal), zap.String("host", host),
			zap.Int8("operation", int8(op)), zap.Int8("resource-type", int8(rt)), zap.String("resource", clip(name)),
			zap.String("api", apiName(rc.key)))
	}
	return ok
}

// authzName is the resource name an ACL check uses: a companion topic of
// a compacted view is read and described as its source topic (resolver
// the companion topic, read-only companions: it has no ACLs of its own, and anything but reading it is
// refused anyway).
func (rc *reqCtx) authzName(op auth.Operation, rt auth.ResourceType, name string) string {
	if rt != auth.ResourceTopic || (op != auth.OpRead && op != auth.OpDescribe) || rc.conn.s.res == nil {
		return name
	}
	if src, ok := rc.conn.s.res.CompanionSource(name); ok {
		return src
	}
	return name
}

// allowedCluster is allowed on the one cluster resource.
func (rc *reqCtx) allowedCluster(op auth.Operation) bool {
	return rc.allowed(op, auth.ResourceCluster, auth.ClusterName)
}

// operations is the authorized_operations bit field of a resource.
func (rc *reqCtx) operations(rt auth.ResourceType, name string) int32 {
	return rc.conn.s.cfg.Authorizer.Operations(rc.conn.Principal(), rc.conn.peerHost(), rt, rc.authzName(auth.OpDescribe, rt, name))
}

// peerHost is the client's IP address, which ACL hosts name.
func (c *conn) peerHost() string {
	addr := c.nc.RemoteAddr()
	if a, ok := addr.(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	return host
}

// Coordinator types of FindCoordinator (authz.CoordinatorGroup...).
const (
	coordinatorGroup = authz.CoordinatorGroup
	coordinatorTxn   = authz.CoordinatorTxn
	coordinatorShare = authz.CoordinatorShare
)

// topicAllowed is authz.TopicAllowed for handlers that check topics of
// their own (a fetch session's, a share fetch's).
func topicAllowed(rc *reqCtx, op auth.Operation) func(string) bool {
	return authz.TopicAllowed(rights{rc}, op)
}

// groupAllowed is op on the group.
func groupAllowed(rc *reqCtx, op auth.Operation, group string) bool {
	return rc.allowed(op, auth.ResourceGroup, group)
}

// authorizeFetch marks the items whose topic the principal may not READ,
// whether the request or its fetch session names them; Fetch answers them
// TOPIC_AUTHORIZATION_FAILED (per-API authorization). A fetch from a replica (follower)
// needs CLUSTER_ACTION on the cluster instead, for every item, as in
// Kafka's handleFetchRequest.
func authorizeFetch(rc *reqCtx, items []fetch.Item, follower bool) {
	if rc.conn.s.cfg.Authorizer == nil {
		return
	}
	ok := topicAllowed(rc, auth.OpRead)
	if follower {
		action := rc.allowedCluster(auth.OpClusterAction)
		ok = func(string) bool { return action }
	}
	for i := range items {
		it := &items[i]
		it.Refused = !it.ErrID && !ok(it.Label())
	}
}

// rights is a request's view for its authorization rule (authz.Request):
// the connection's principal against the configured authorizer, and the
// resolver's topics.
type rights struct{ rc *reqCtx }

func (r rights) Allowed(op auth.Operation, rt auth.ResourceType, name string) bool {
	return r.rc.allowed(op, rt, name)
}

func (r rights) Operations(rt auth.ResourceType, name string) int32 { return r.rc.operations(rt, name) }

func (r rights) Authorizing() bool { return r.rc.conn.s.cfg.Authorizer != nil }

func (r rights) AnyTopicWrite() bool {
	c := r.rc.conn
	return c.s.cfg.Authorizer.AuthorizeAnyTopicWrite(c.Principal(), c.peerHost())
}

func (r rights) TopicExists(name string) bool {
	_, ok := r.rc.conn.s.res.Partitions(name)
	return ok
}

func (r rights) TopicByID(id [16]byte) (string, bool) {
	name, _, ok := r.rc.conn.s.topicByID(id)
	return name, ok
}

func (r rights) AutoCreateTopics() bool { return r.rc.conn.s.res.AutoCreateTopics() }

func (r rights) IsInternal(name string) bool { return resolver.IsInternalTopic(name) }
