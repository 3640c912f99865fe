package kafkadiff

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// caseTopicRules asks both brokers about the topic configs Kafka 4.4
// validates or enforces on Produce: KIP-390's compression levels (their
// ranges), max.decompressed.message.bytes (its range, and a compressed
// record above it), the 3.x configs Kafka 4.0 removed, and
// message.timestamp.after.max.ms's one-hour default (a record two hours
// ahead is INVALID_TIMESTAMP, every such record listed), and a batch
// whose producer set its timestamp type to LogAppendTime (refused on a
// CreateTime and on a LogAppendTime topic alike).
func caseTopicRules(r *run) {
	for _, kv := range [][2]string{
		{"compression.gzip.level", "0"}, {"compression.gzip.level", "10"},
		{"compression.lz4.level", "18"}, {"compression.zstd.level", "23"},
		{"compression.zstd.level", "-131073"}, {"max.decompressed.message.bytes", "0"},
		{"message.downconversion.enable", "false"}, {"message.timestamp.difference.max.ms", "1000"},
	} {
		r.do("create with "+kv[0]+"="+kv[1], createTopicReq("kd-tr-bad", kv[0], kv[1]))
	}
	r.createTopic("kd-tr", 1, "compression.type", "gzip", "compression.gzip.level", "1", "compression.zstd.level", "-5")
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "kd-tr"
	for _, name := range []string{"message.downconversion.enable", "message.timestamp.difference.max.ms"} {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = name, kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("1")
		res.Configs = append(res.Configs, c)
	}
	alter.Resources = append(alter.Resources, res)
	r.do("alter removed configs", alter)
	r.do("describe levels", describeConfigsReq(kmsg.ConfigResourceTypeTopic, "kd-tr",
		"compression.gzip.level", "compression.lz4.level", "compression.zstd.level", "max.decompressed.message.bytes"))
	future := time.Now().Add(2 * time.Hour).UnixMilli()
	r.produce("produce two hours ahead", "kd-tr", 0, Batch{Records: Recs("f", 3), FirstTS: future})
	r.produce("produce now", "kd-tr", 0, Batch{Records: Recs("n", 3)})
	// A producer's LogAppendTime bit, on a topic that recompresses (kd-tr,
	// gzip) and on one that keeps the producer's batch (kd-tr-ts).
	r.createTopic("kd-tr-ts", 1)
	for _, topic := range []string{"kd-tr", "kd-tr-ts"} {
		r.produce("produce stamped LogAppendTime to "+topic, topic, 0, Batch{Records: Recs("l", 2), LogAppendTime: true})
		r.produce("produce stamped LogAppendTime two hours ahead to "+topic, topic, 0, Batch{Records: Recs("m", 2), FirstTS: future, LogAppendTime: true})
		r.produce("produce stamped LogAppendTime compressed to "+topic, topic, 0, Batch{Records: Recs("z", 2), LogAppendTime: true, Zstd: true})
	}
	r.fetch("fetch the stamped batches from kd-tr", -1, fetchReq("kd-tr", 0, 3, 1<<20, 1<<20, 0))
	r.fetch("fetch the stamped batches from kd-tr-ts", -1, fetchReq("kd-tr-ts", 0, 0, 1<<20, 1<<20, 0))
	r.createTopic("kd-tr-lat", 1, "message.timestamp.type", "LogAppendTime")
	r.produce("produce stamped LogAppendTime to a LogAppendTime topic", "kd-tr-lat", 0, Batch{Records: Recs("l", 2), LogAppendTime: true})
	r.produce("produce to a LogAppendTime topic", "kd-tr-lat", 0, Batch{Records: Recs("c", 2)})

	r.createTopic("kd-tr-md", 1, "max.decompressed.message.bytes", "100")
	r.produce("produce compressed record above the bound", "kd-tr-md", 0, Batch{Records: []Rec{BigRec(200)}, Zstd: true})
	r.produce("produce compressed records within the bound", "kd-tr-md", 0, Batch{Records: Recs("s", 3), Zstd: true})
	r.produce("produce uncompressed record above the bound", "kd-tr-md", 0, Batch{Records: []Rec{BigRec(200)}})
}

// createTopicReq is a CreateTopics of one one-partition topic with one
// config, answered without waiting for a leader (it may be refused).
func createTopicReq(topic, name, value string) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, 1, 1
	c := kmsg.NewCreateTopicsRequestTopicConfig()
	c.Name, c.Value = name, kmsg.StringPtr(value)
	t.Configs = append(t.Configs, c)
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 30000
	return req
}
