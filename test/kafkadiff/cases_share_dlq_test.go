package kafkadiff

import "github.com/twmb/franz-go/pkg/kmsg"

// caseShareDLQConfigs: the configs of share-group dead-letter queues
// (KIP-1191): the GROUP configs errors.deadletterqueue.topic.name and
// errors.deadletterqueue.copy.record.enable, validated and described,
// and the topic config errors.deadletterqueue.group.enable.
func caseShareDLQConfigs(r *run) {
	const group, topic = "kd-dlq-g", "dlq.kd-dlq"
	alter := func(name string, kvs ...string) {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
		for i := 0; i+1 < len(kvs); i += 2 {
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Value = kvs[i], kmsg.StringPtr(kvs[i+1])
			res.Configs = append(res.Configs, c)
		}
		req.Resources = append(req.Resources, res)
		r.do(name, req)
	}
	const name, copyRec = "errors.deadletterqueue.topic.name", "errors.deadletterqueue.copy.record.enable"
	alter("dlq topic starting with __", name, "__kd-dlq")
	alter("dlq copy record not a boolean", copyRec, "maybe")
	alter("dlq topic without the prefix", name, "kd-dlq-no-prefix")
	alter("dlq topic and copy record", name, topic, copyRec, "TRUE")
	// Kafka applies a GROUP config when its metadata record reaches the
	// broker: wait for the last alteration before describing.
	r.await("dlq group configs applied", describeConfigsReq(kmsg.ConfigResourceTypeGroupConfig, group, name), func(resp kmsg.Response) bool {
		rs := resp.(*kmsg.DescribeConfigsResponse).Resources
		return len(rs) == 1 && len(rs[0].Configs) == 1 && rs[0].Configs[0].Value != nil && *rs[0].Configs[0].Value == topic
	})
	r.do("describe dlq group configs", describeConfigsReq(kmsg.ConfigResourceTypeGroupConfig, group, name, copyRec))
	r.do("describe dlq group configs of a group without", describeConfigsReq(kmsg.ConfigResourceTypeGroupConfig, "kd-dlq-none", name, copyRec))
	r.createTopic(topic, 1, "errors.deadletterqueue.group.enable", "true")
	r.do("describe dlq topic config", describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, "errors.deadletterqueue.group.enable"))
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = "dlq.kd-dlq-bad", 1, 1
	c := kmsg.NewCreateTopicsRequestTopicConfig()
	c.Name, c.Value = "errors.deadletterqueue.group.enable", kmsg.StringPtr("maybe")
	t.Configs = append(t.Configs, c)
	req.Topics = append(req.Topics, t)
	r.do("create a topic with a bad dlq enable", req)
}
