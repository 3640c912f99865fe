package authz

// The authorization coverage table: per API key, how its rule (and
// handler) treats each kind of resource its request or response names.
// TestAuthzRulesStateEveryResource walks the dispatch table (kafka/apis.go)
// and finds, by reflection over the request and response types, the
// kinds each API names; a key whose statement misses one of them (or
// states one it does not name) fails, so a new API, or a new field
// naming a topic, a group, a transactional id or a member, is not
// served before someone has decided how it is authorized. The table
// is documentation checked against the wire types, not code that
// authorizes: the rules are rules.go and its neighbours.

import (
	"reflect"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// resourceKind is a kind of resource a request or response may name,
// which an authorization rule must say how it handles.
type resourceKind int

const (
	resTopic resourceKind = iota
	resGroup
	resTxnID
	resMember
	resTyped // ResourceType + ResourceName: configs, ACLs
	numResourceKinds
)

func (k resourceKind) String() string {
	return [...]string{"topic", "group", "transactional id", "member", "typed resource"}[k]
}

// resourceKindOf is the kind a request or response field names, by its
// name; ok false for none.
func resourceKindOf(field string) (resourceKind, bool) {
	switch {
	case field == "MemberID" || field == "GroupInstanceID" || field == "InstanceID" || strings.HasSuffix(field, "MemberID"):
		return resMember, true
	case strings.Contains(field, "TransactionalID") || field == "TransactionID":
		return resTxnID, true
	case field == "Group" || field == "GroupID" || field == "GroupIDs" || field == "Groups" || field == "CoordinatorKey" || field == "CoordinatorKeys":
		return resGroup, true
	case field == "ResourceName":
		return resTyped, true
	case field == "Topic" || field == "TopicID" || field == "TopicName" || field == "TopicNames" || field == "Topics" ||
		field == "SubscribedTopicNames" || field == "SubscribedTopicRegex" || field == "SubscribedTopics":
		return resTopic, true
	}
	return 0, false
}

// namedResources walks the request and response types of key and returns
// the kinds of resource they name anywhere (in nested structs too).
func namedResources(key int16) map[resourceKind]bool {
	out := map[resourceKind]bool{}
	req := kmsg.RequestForKey(key)
	if req == nil {
		return out
	}
	seen := map[reflect.Type]bool{}
	walkResources(reflect.TypeOf(req), seen, out)
	walkResources(reflect.TypeOf(req.ResponseKind()), seen, out)
	return out
}

func walkResources(t reflect.Type, seen map[reflect.Type]bool, out map[resourceKind]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		if k, ok := resourceKindOf(f.Name); ok {
			out[k] = true
		}
		walkResources(f.Type, seen, out)
	}
}

// authzStatement says, per resource kind, what the API needs and what
// it reveals; "" for a kind the API does not name. Other is for APIs
// that name none (cluster operations, or nothing at all).
type authzStatement struct {
	Topic, Group, TxnID, Member, Typed, Other string
}

func (st authzStatement) of(k resourceKind) string {
	return [...]string{st.Topic, st.Group, st.TxnID, st.Member, st.Typed}[k]
}

const (
	memberNoACL      = "no ACL of its own: the coordinator checks it belongs to the group (UNKNOWN_MEMBER_ID); the group's READ covers it"
	memberShareBound = "must be a live member joined by the same principal (UNKNOWN_MEMBER_ID); in cluster mode the partition leader takes it on trust"
)

var authzCoverage = map[int16]authzStatement{
	0:  {Topic: "WRITE per topic (TOPIC_AUTHORIZATION_FAILED)", TxnID: "WRITE (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every topic)"},
	1:  {Topic: "READ per partition, request and fetch session alike (TOPIC_AUTHORIZATION_FAILED)"},
	2:  {Topic: "DESCRIBE per topic"},
	3:  {Topic: "DESCRIBE per topic; all-topics lists only describable ones; CREATE to auto-create"},
	8:  {Topic: "READ per topic", Group: "READ", Member: memberNoACL},
	9:  {Topic: "DESCRIBE per named topic; all-topics lists only describable ones", Group: "DESCRIBE", Member: memberNoACL},
	10: {Group: "DESCRIBE on the group or transactional id named by the key"},
	11: {Group: "READ", Member: memberNoACL},
	12: {Group: "READ", Member: memberNoACL},
	13: {Group: "READ", Member: memberNoACL},
	14: {Group: "READ", Member: memberNoACL},
	15: {Group: "DESCRIBE per group", Member: "described only within a describable group"},
	16: {Group: "DESCRIBE on the cluster lists all, else only describable groups"},
	17: {Other: "none: the SASL exchange precedes authorization"},
	18: {Other: "none: served to anyone"},
	19: {Topic: "CREATE on the cluster or the topic; configs returned only with DESCRIBE_CONFIGS"},
	20: {Topic: "DELETE per topic, by name or id; a refused id is not named"},
	21: {Topic: "DELETE per topic"},
	22: {TxnID: "WRITE; without one, IDEMPOTENT_WRITE on the cluster or WRITE on some topic"},
	23: {Topic: "DESCRIBE per topic"},
	24: {Topic: "WRITE per topic, all or none", TxnID: "WRITE; v4+ CLUSTER_ACTION"},
	25: {Group: "READ", TxnID: "WRITE"},
	26: {TxnID: "WRITE"},
	27: {Topic: "ALTER or CLUSTER_ACTION on the cluster, in the handler (CLUSTER_AUTHORIZATION_FAILED per partition)"},
	28: {Topic: "READ per topic", Group: "READ", TxnID: "WRITE", Member: memberNoACL},
	29: {Typed: "DESCRIBE on the cluster, in the handler, whatever ACL resource is filtered"},
	30: {Typed: "ALTER on the cluster, in the handler, whatever resource the ACL names"},
	31: {Typed: "ALTER on the cluster, in the handler, whatever ACL resource is filtered"},
	32: {Typed: "DESCRIBE_CONFIGS on the topic, group or cluster (broker and client-metrics resources)"},
	33: {Typed: "ALTER_CONFIGS on the topic, group or cluster (broker and client-metrics resources)"},
	34: {Topic: "ALTER on the cluster, in the handler (CLUSTER_AUTHORIZATION_FAILED per partition)"},
	35: {Topic: "DESCRIBE on the cluster, in the handler (CLUSTER_AUTHORIZATION_FAILED, no dirs)"},
	36: {Other: "none: the SASL exchange precedes authorization"},
	37: {Topic: "ALTER per topic"},
	38: {Other: "a connection authenticated (not by a token); another owner needs CREATE_TOKENS on its USER resource, in kafka/token"},
	39: {Other: "a connection authenticated (not by a token), the token's owner or a renewer, in kafka/token"},
	40: {Other: "a connection authenticated (not by a token), the token's owner or a renewer, in kafka/token"},
	41: {Other: "a connection authenticated (not by a token); others' tokens need DESCRIBE on the DELEGATION_TOKEN or DESCRIBE_TOKENS on the owner's USER, in kafka/token"},
	42: {Group: "DELETE per group"},
	43: {Topic: "ALTER on the cluster, in the handler (CLUSTER_AUTHORIZATION_FAILED, top-level and per partition)"},
	44: {Typed: "ALTER_CONFIGS on the topic, group or cluster (broker and client-metrics resources)"},
	45: {Topic: "ALTER on the cluster, in the handler (CLUSTER_AUTHORIZATION_FAILED, top-level and per partition)"},
	46: {Topic: "DESCRIBE on the cluster, in the handler (CLUSTER_AUTHORIZATION_FAILED)"},
	47: {Topic: "READ per topic", Group: "DELETE"},
	48: {Other: "DESCRIBE_CONFIGS on the cluster"},
	49: {Other: "ALTER_CONFIGS on the cluster"},
	50: {Other: "DESCRIBE on the cluster"},
	51: {Other: "ALTER on the cluster"},
	57: {Other: "ALTER on the cluster, in the handler (CLUSTER_AUTHORIZATION_FAILED)"},
	60: {Other: "cluster authorized operations only with DESCRIBE on the cluster"},
	61: {Topic: "READ per topic"},
	65: {Topic: "only topics the principal may DESCRIBE are listed", TxnID: "DESCRIBE per id"},
	66: {TxnID: "only ids the principal may DESCRIBE are listed"},
	68: {Topic: "DESCRIBE per subscribed name (TOPIC_AUTHORIZATION_FAILED); a regex resolves per member to describable topics only", Group: "READ", Member: memberNoACL},
	69: {Topic: "a group naming a topic without DESCRIBE is TOPIC_AUTHORIZATION_FAILED", Group: "DESCRIBE per group", Member: "described only within a describable group"},
	71: {Other: "none, as in Kafka (KIP-714): any client may ask for its telemetry subscription"},
	72: {Other: "none, as in Kafka (KIP-714): a push is checked against the instance's subscription only"},
	74: {Other: "DESCRIBE_CONFIGS on the cluster, in the handler (CLUSTER_AUTHORIZATION_FAILED)"},
	75: {Topic: "DESCRIBE per topic, in the handler: all-topics pages only describable ones; a named one without is TOPIC_AUTHORIZATION_FAILED, outside the page"},
	76: {Topic: "DESCRIBE per subscribed name", Group: "READ", Member: "bound to the principal that joined it (UNKNOWN_MEMBER_ID)"},
	77: {Topic: "a group naming a topic without DESCRIBE is TOPIC_AUTHORIZATION_FAILED", Group: "DESCRIBE per group", Member: "described only within a describable group"},
	78: {Topic: "READ per partition fetched or acknowledged", Group: "READ", Member: memberShareBound},
	79: {Topic: "READ per partition acknowledged", Group: "READ", Member: memberShareBound},
	88: {Topic: "DESCRIBE per topology topic (TOPIC_AUTHORIZATION_FAILED); internal topics created only with CREATE on the cluster or the topic, else a MISSING_INTERNAL_TOPICS status", Group: "READ", Member: memberNoACL},
	89: {Topic: "a group whose topology names a topic without DESCRIBE is TOPIC_AUTHORIZATION_FAILED", Group: "DESCRIBE per group", Member: "described only within a describable group"},
	93: {Group: "READ (KIP-1331: like an offset commit, a push does not modify the group)", Member: memberNoACL},
	90: {Topic: "DESCRIBE per named topic (no id, TOPIC_AUTHORIZATION_FAILED); all-topics lists only describable ones", Group: "DESCRIBE per group"},
	91: {Topic: "READ per topic", Group: "READ"},
	92: {Topic: "READ per topic", Group: "DELETE"},
}
