package kafkadiff

import "github.com/twmb/franz-go/pkg/kmsg"

// quotaEntity is an AlterClientQuotas entity: type, name pairs (a nil
// name is the default entity).
func quotaEntity(kv ...*string) []kmsg.AlterClientQuotasRequestEntryEntity {
	var out []kmsg.AlterClientQuotasRequestEntryEntity
	for i := 0; i+1 < len(kv); i += 2 {
		e := kmsg.NewAlterClientQuotasRequestEntryEntity()
		e.Type, e.Name = *kv[i], kv[i+1]
		out = append(out, e)
	}
	return out
}

func quotaOp(key string, v float64, remove bool) kmsg.AlterClientQuotasRequestEntryOp {
	o := kmsg.NewAlterClientQuotasRequestEntryOp()
	o.Key, o.Value, o.Remove = key, v, remove
	return o
}

func alterQuotas(validate bool, ent []kmsg.AlterClientQuotasRequestEntryEntity, ops ...kmsg.AlterClientQuotasRequestEntryOp) *kmsg.AlterClientQuotasRequest {
	r := kmsg.NewPtrAlterClientQuotasRequest()
	e := kmsg.NewAlterClientQuotasRequestEntry()
	e.Entity, e.Ops = ent, ops
	r.Entries, r.ValidateOnly = append(r.Entries, e), validate
	return r
}

func describeQuotas(strict bool, cs ...kmsg.DescribeClientQuotasRequestComponent) *kmsg.DescribeClientQuotasRequest {
	r := kmsg.NewPtrDescribeClientQuotasRequest()
	r.Components, r.Strict = cs, strict
	return r
}

func quotaFilter(typ string, m kmsg.QuotasMatchType, name *string) kmsg.DescribeClientQuotasRequestComponent {
	c := kmsg.NewDescribeClientQuotasRequestComponent()
	c.EntityType, c.MatchType, c.Match = typ, m, name
	return c
}

// caseClientQuotas alters and describes client quotas of every entity
// kind, defaults included, and sends what Kafka refuses. Describes that
// answer several entities are left out: Kafka lists them in its hash
// map's order. Kafka applies an alteration to its metadata image after
// answering it, so each describe of new state awaits the last alteration
// it shows first.
func caseClientQuotas(r *run) {
	U, C, I := str("user"), str("client-id"), str("ip")
	r.do("set a user's byte rates", alterQuotas(false, quotaEntity(U, str("kd-alice")), quotaOp("producer_byte_rate", 1024, false), quotaOp("consumer_byte_rate", 2048, false)))
	// The defaults apply to every other case's clients (all
	// User:ANONYMOUS): rates no case comes near, removed at the end.
	r.do("set the default user's", alterQuotas(false, quotaEntity(U, nil), quotaOp("producer_byte_rate", 1e12, false)))
	r.do("set a user and client id's", alterQuotas(false, quotaEntity(U, str("kd-alice"), C, str("kd-app")), quotaOp("request_percentage", 12.5, false)))
	r.do("set the default user and default client id's", alterQuotas(false, quotaEntity(U, nil, C, nil), quotaOp("controller_mutation_rate", 1e9, false)))
	r.do("set the default client id's", alterQuotas(false, quotaEntity(C, nil), quotaOp("consumer_byte_rate", 1e12, false)))
	r.do("set an ip's", alterQuotas(false, quotaEntity(I, str("10.9.8.7")), quotaOp("connection_creation_rate", 5, false)))
	r.do("validate only", alterQuotas(true, quotaEntity(U, str("kd-dave")), quotaOp("producer_byte_rate", 5, false)))
	r.do("zero", alterQuotas(false, quotaEntity(U, str("kd-bob")), quotaOp("producer_byte_rate", 0, false)))
	r.do("negative", alterQuotas(false, quotaEntity(U, str("kd-bob")), quotaOp("request_percentage", -1, false)))
	r.do("fraction of a long", alterQuotas(false, quotaEntity(U, str("kd-bob")), quotaOp("producer_byte_rate", 5.5, false)))
	r.do("fraction of an int", alterQuotas(false, quotaEntity(I, str("10.9.8.6")), quotaOp("connection_creation_rate", 5.5, false)))
	r.do("too large for a long", alterQuotas(false, quotaEntity(U, str("kd-bob")), quotaOp("producer_byte_rate", 1e300, false)))
	r.do("unknown key", alterQuotas(false, quotaEntity(U, str("kd-bob")), quotaOp("no_such_key", 5, false)))
	r.do("an ip key on a user", alterQuotas(false, quotaEntity(U, str("kd-bob")), quotaOp("connection_creation_rate", 5, false)))
	r.do("a user key on an ip", alterQuotas(false, quotaEntity(I, str("10.9.8.5")), quotaOp("producer_byte_rate", 5, false)))
	r.do("an ip and a user", alterQuotas(false, quotaEntity(U, str("kd-bob"), I, str("10.9.8.4")), quotaOp("producer_byte_rate", 5, false)))
	r.do("not an ip", alterQuotas(false, quotaEntity(I, str("kd-not-an-ip")), quotaOp("connection_creation_rate", 5, false)))
	r.do("an empty user name", alterQuotas(false, quotaEntity(U, str("")), quotaOp("producer_byte_rate", 5, false)))
	r.do("no entity", alterQuotas(false, nil, quotaOp("producer_byte_rate", 5, false)))
	r.do("an unknown entity type", alterQuotas(false, quotaEntity(str("group"), str("g")), quotaOp("producer_byte_rate", 5, false)))
	r.do("a key twice", alterQuotas(false, quotaEntity(U, str("kd-bob")), quotaOp("producer_byte_rate", 5, false), quotaOp("producer_byte_rate", 6, false)))
	r.do("removing what is not set", alterQuotas(false, quotaEntity(U, str("kd-carol")), quotaOp("producer_byte_rate", 0, true)))

	alice := describeQuotas(true, quotaFilter("user", 0, str("kd-alice")))
	r.await("alice's quotas", alice, func(resp kmsg.Response) bool { return len(resp.(*kmsg.DescribeClientQuotasResponse).Entries) == 1 })
	r.do("describe a user, strict", alice)
	r.await("the default user and client's", describeQuotas(true, quotaFilter("user", 1, nil), quotaFilter("client-id", 1, nil)),
		func(resp kmsg.Response) bool { return len(resp.(*kmsg.DescribeClientQuotasResponse).Entries) == 1 })
	r.do("describe the default user, strict", describeQuotas(true, quotaFilter("user", 1, nil)))
	r.do("describe the default user and default client id", describeQuotas(true, quotaFilter("user", 1, nil), quotaFilter("client-id", 1, nil)))
	r.do("describe a user and a client id", describeQuotas(false, quotaFilter("user", 0, str("kd-alice")), quotaFilter("client-id", 2, nil)))
	r.do("describe the default client id, strict", describeQuotas(true, quotaFilter("client-id", 1, nil)))
	ip := describeQuotas(false, quotaFilter("ip", 0, str("10.9.8.7")))
	r.await("the ip's quota", ip, func(resp kmsg.Response) bool { return len(resp.(*kmsg.DescribeClientQuotasResponse).Entries) == 1 })
	r.do("describe an ip", ip)
	r.do("describe what validate-only did not set", describeQuotas(false, quotaFilter("user", 0, str("kd-dave"))))
	r.do("describe a default with a name", describeQuotas(false, quotaFilter("user", 1, str("x"))))
	r.do("describe an exact match without a name", describeQuotas(false, quotaFilter("user", 0, nil)))
	r.do("describe an unknown match type", describeQuotas(false, quotaFilter("user", 7, nil)))
	r.do("describe a type twice", describeQuotas(false, quotaFilter("user", 2, nil), quotaFilter("user", 0, str("a"))))
	r.do("describe an ip with a user", describeQuotas(false, quotaFilter("ip", 2, nil), quotaFilter("user", 2, nil)))
	r.do("describe an unknown type", describeQuotas(false, quotaFilter("group", 2, nil)))

	r.do("remove a user's byte rates", alterQuotas(false, quotaEntity(U, str("kd-alice")), quotaOp("producer_byte_rate", 0, true), quotaOp("consumer_byte_rate", 0, true)))
	r.await("alice's quotas gone", alice, func(resp kmsg.Response) bool { return len(resp.(*kmsg.DescribeClientQuotasResponse).Entries) == 0 })
	r.do("describe the user after", alice)
	r.do("remove the defaults", alterQuotas(false, quotaEntity(U, nil), quotaOp("producer_byte_rate", 0, true)))
	r.setup(alterQuotas(false, quotaEntity(U, nil, C, nil), quotaOp("controller_mutation_rate", 0, true)))
	r.setup(alterQuotas(false, quotaEntity(C, nil), quotaOp("consumer_byte_rate", 0, true)))
}
