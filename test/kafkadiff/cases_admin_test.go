package kafkadiff

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The admin APIs of a single node: DescribeTopicPartitions, the log dir
// APIs, ElectLeaders, the reassignment APIs, UpdateFeatures and
// ListConfigResources. Every request names the case's own topics (other
// cases run in parallel on the same brokers), and UpdateFeatures changes
// nothing but in validate_only or refused requests, which leave the
// levels the other cases run at.

func dtp(limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor, topics ...string) *kmsg.DescribeTopicPartitionsRequest {
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit, req.Cursor = limit, cursor
	for _, n := range topics {
		req.Topics = append(req.Topics, kmsg.DescribeTopicPartitionsRequestTopic{Topic: n})
	}
	return req
}

func caseDescribeTopicPartitions(r *run) {
	const a, b = "kd-dtp-a", "kd-dtp-b"
	r.createTopic(a, 3)
	r.createTopic(b, 2)
	cur := func(topic string, p int32) *kmsg.DescribeTopicPartitionsRequestCursor {
		return &kmsg.DescribeTopicPartitionsRequestCursor{Topic: topic, Partition: p}
	}
	r.do("named, all fit", dtp(10, nil, b, a))
	r.do("limit 2: cut inside the first topic", dtp(2, nil, a, b))
	r.do("from cursor a/2, limit 2", dtp(2, cur(a, 2), a, b))
	r.do("limit 3: cut at a topic's start", dtp(3, nil, a, b))
	r.do("limit 0 counts as 1", dtp(0, nil, a))
	r.do("cursor past the partitions", dtp(5, cur(a, 7), a, b))
	r.do("from cursor b/1", dtp(5, cur(b, 1), a, b))
	r.do("missing and invalid names", dtp(10, nil, "kd-dtp-missing", "kd dtp bad!", a))
	r.do("a topic named twice", dtp(10, nil, a, a))
	r.do("cursor topic not named", dtp(10, cur("kd-dtp-z", 0), a, b))
	r.do("negative cursor partition", dtp(10, cur(a, -1), a))
}

// logDirsFilter keeps what two brokers agree on: the dir is each one's
// own path, the file system's sizes are their machine's, and a
// partition's size is its bytes in each one's segment format (kgateway's
// frames hold more than the batch): only empty or not is compared.
func logDirsFilter(flat map[string]string) {
	for p, v := range flat {
		switch {
		case strings.HasSuffix(p, ".Dir"):
			flat[p] = "<dir>"
		case strings.HasSuffix(p, "Bytes") && v != "-1":
			flat[p] = "<bytes>"
		case strings.HasSuffix(p, ".Size") && v != "0":
			flat[p] = "<non-empty>"
		}
	}
}

func describeLogDirs(topics map[string][]int32) *kmsg.DescribeLogDirsRequest {
	req := kmsg.NewPtrDescribeLogDirsRequest()
	if topics != nil {
		req.Topics = []kmsg.DescribeLogDirsRequestTopic{}
		for t, ps := range topics {
			req.Topics = append(req.Topics, kmsg.DescribeLogDirsRequestTopic{Topic: t, Partitions: ps})
		}
	}
	return req
}

func alterLogDirs(dir, topic string, parts ...int32) *kmsg.AlterReplicaLogDirsRequest {
	req := kmsg.NewPtrAlterReplicaLogDirsRequest()
	req.Dirs = []kmsg.AlterReplicaLogDirsRequestDir{{Dir: dir,
		Topics: []kmsg.AlterReplicaLogDirsRequestDirTopic{{Topic: topic, Partitions: parts}}}}
	return req
}

func caseLogDirs(r *run) {
	const topic = "kd-ld"
	r.createTopic(topic, 3)
	r.produce("produce to partition 1", topic, 1, Batch{Records: Recs("a", 3)})
	named := map[string][]int32{topic: {0, 1, 2, 9}, "kd-ld-missing": {0}}
	// Kafka creates a new partition's log a moment after Metadata shows
	// its leader: wait (unrecorded) until the dir holds all three.
	r.await("three partition logs", describeLogDirs(named), func(resp kmsg.Response) bool {
		d := resp.(*kmsg.DescribeLogDirsResponse).Dirs
		return len(d) == 1 && len(d[0].Topics) == 1 && len(d[0].Topics[0].Partitions) == 3
	})
	r.filter = logDirsFilter
	for _, v := range []int16{1, 2, 3, 4, 5} {
		r.doV("describe named v"+itoa(int(v)), v, describeLogDirs(named))
	}
	resp := r.do("describe an empty list", describeLogDirs(map[string][]int32{}))
	dir := ""
	if resp != nil && len(resp.(*kmsg.DescribeLogDirsResponse).Dirs) == 1 {
		dir = resp.(*kmsg.DescribeLogDirsResponse).Dirs[0].Dir
	}
	r.filter = nil
	r.do("alter to the log dir", alterLogDirs(dir, topic, 0, 9))
	r.do("alter to another dir", alterLogDirs("/kd-ld-nowhere", topic, 0))
	r.do("alter to a relative dir", alterLogDirs("kd-ld", topic, 0))
	r.do("alter a missing topic", alterLogDirs(dir, "kd-ld-missing", 0))
	r.do("alter a name too long for the move", alterLogDirs(dir, "kd-ld-"+strings.Repeat("x", 240), 0))
	r.doV("describe v0 (removed)", 0, describeLogDirs(named))
}

func electLeaders(typ int8, topic string, parts ...int32) *kmsg.ElectLeadersRequest {
	req := kmsg.NewPtrElectLeadersRequest()
	req.ElectionType, req.TimeoutMillis = typ, 30000
	req.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: topic, Partitions: parts}}
	return req
}

func caseElectLeaders(r *run) {
	const topic = "kd-el"
	r.createTopic(topic, 2)
	r.do("preferred", electLeaders(0, topic, 0, 1, 7))
	r.do("unclean", electLeaders(1, topic, 0))
	r.do("missing topic", electLeaders(0, "kd-el-missing", 0))
	r.do("unknown election type", electLeaders(5, topic, 0))
	r.doV("v0 (preferred)", 0, electLeaders(0, topic, 0))
	empty := electLeaders(0, topic)
	empty.Topics = []kmsg.ElectLeadersRequestTopic{}
	r.do("empty topic list", empty)
}

func reassign(topic string, part int32, replicas []int32) *kmsg.AlterPartitionAssignmentsRequest {
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.TimeoutMillis, req.AllowReplicationFactorChange = 30000, true
	req.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: topic,
		Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: part, Replicas: replicas}}}}
	return req
}

func caseReassignments(r *run) {
	const topic = "kd-ra"
	r.createTopic(topic, 2)
	self := r.side.nodeID
	r.do("to an unregistered broker", reassign(topic, 0, []int32{self + 100}))
	r.do("to itself", reassign(topic, 1, []int32{self}))
	r.do("itself and an unregistered broker", reassign(topic, 0, []int32{self, self + 100}))
	r.do("itself twice", reassign(topic, 0, []int32{self, self}))
	r.do("empty replica list", reassign(topic, 0, []int32{}))
	r.do("negative broker", reassign(topic, 0, []int32{-1}))
	r.do("cancel, none in progress", reassign(topic, 0, nil))
	r.do("missing partition", reassign(topic, 9, []int32{self}))
	r.do("missing topic", reassign("kd-ra-missing", 0, []int32{self}))
	r.doV("v0 to an unregistered broker", 0, reassign(topic, 0, []int32{self + 100}))
	list := kmsg.NewPtrListPartitionReassignmentsRequest()
	list.TimeoutMillis = 30000
	list.Topics = []kmsg.ListPartitionReassignmentsRequestTopic{{Topic: topic, Partitions: []int32{0, 1, 9}}, {Topic: "kd-ra-missing", Partitions: []int32{0}}}
	r.do("list named", list)
	list.Topics = nil
	r.do("list all", list)
}

func updateFeatures(v int16, validate bool, name string, level int16, typ int8) *kmsg.UpdateFeaturesRequest {
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.SetVersion(v)
	req.TimeoutMillis, req.ValidateOnly = 30000, validate
	if name != "" {
		req.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{{Feature: name, MaxVersionLevel: level, UpgradeType: typ, AllowDowngrade: typ != 1}}
	}
	return req
}

func caseFeatures(r *run) {
	const tv = "transaction.version"
	for _, v := range []int16{1, 2} {
		p := " v" + itoa(int(v))
		r.doV("validate a safe downgrade to 1"+p, v, updateFeatures(v, true, tv, 1, 2))
		r.doV("validate an unsafe downgrade to 0"+p, v, updateFeatures(v, true, tv, 0, 3))
		r.doV("a downgrade typed as an upgrade"+p, v, updateFeatures(v, false, tv, 1, 1))
		r.doV("above the supported range"+p, v, updateFeatures(v, false, tv, 3, 1))
		r.doV("negative level"+p, v, updateFeatures(v, false, tv, -1, 2))
		r.doV("unknown feature"+p, v, updateFeatures(v, false, "kd.unknown.version", 1, 1))
		r.doV("unknown upgrade type"+p, v, updateFeatures(v, false, tv, 1, 7))
		r.doV("the finalized level again"+p, v, updateFeatures(v, false, tv, 2, 1))
		r.doV("no updates"+p, v, updateFeatures(v, false, "", 0, 0))
	}
	r.doV("v0 without allow_downgrade", 0, updateFeatures(0, false, tv, 1, 1))
	r.doV("validate turning share groups off", 1, updateFeatures(1, true, "share.version", 0, 2))
	r.doV("validate turning KIP-848 groups off", 1, updateFeatures(1, true, "group.version", 0, 2))
	r.doV("group.version above the supported range", 1, updateFeatures(1, false, "group.version", 2, 1))
}

func listConfigResources(v int16, types ...int8) *kmsg.ListConfigResourcesRequest {
	req := kmsg.NewPtrListConfigResourcesRequest()
	req.SetVersion(v)
	req.ResourceTypes = types
	return req
}

func caseConfigResources(r *run) {
	const topic, group = "kd-lcr", "kd-lcr-g"
	r.createTopic(topic, 1)
	iac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	res.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "share.auto.offset.reset", Value: kmsg.StringPtr("earliest")}}
	iac.Resources = append(iac.Resources, res)
	r.do("set a group config", iac)
	id := itoa(int(r.side.nodeID))
	// Other cases' topics and groups come and go: only this case's, and
	// the broker by a placeholder.
	r.filter = func(flat map[string]string) {
		for p, v := range flat {
			if !strings.HasPrefix(p, "ConfigResources[") {
				continue
			}
			delete(flat, p)
			switch {
			case strings.Contains(p, "[Name="+id+"]"):
				if strings.HasSuffix(p, ".Name") {
					v = "<node>"
				}
				flat[strings.Replace(p, "[Name="+id+"]", "[Name=<node>]", 1)] = v
			case strings.Contains(p, "kd-lcr"):
				flat[p] = v
			}
		}
	}
	r.doV("v0: client metrics", 0, listConfigResources(0))
	r.doV("topics", 1, listConfigResources(1, 2))
	r.doV("brokers", 1, listConfigResources(1, 4))
	r.doV("groups", 1, listConfigResources(1, 32))
	r.doV("client metrics", 1, listConfigResources(1, 16))
	r.doV("an unknown type", 1, listConfigResources(1, 2, 99))
	r.doV("broker loggers", 1, listConfigResources(1, 8))
	r.filter = nil
}

// caseConfigsInternal: the configs of the internal topics, described and
// altered (Kafka lets an admin change them like any topic's).
func caseConfigsInternal(r *run) {
	r.awaitCoordinator(0, "kd-ci-g")  // Kafka creates __consumer_offsets
	r.awaitCoordinator(1, "kd-ci-tx") // and __transaction_state
	for _, topic := range []string{"__consumer_offsets", "__transaction_state"} {
		r.await(topic+" described", describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, "cleanup.policy"), func(resp kmsg.Response) bool {
			rs := resp.(*kmsg.DescribeConfigsResponse).Resources
			return len(rs) == 1 && rs[0].ErrorCode == 0
		})
		r.do("describe "+topic, describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, "cleanup.policy", "min.compaction.lag.ms", "segment.bytes"))
		inc := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = "min.compaction.lag.ms", kmsg.IncrementalAlterConfigOpSet, str("1000")
		rr.Configs = append(rr.Configs, c)
		inc.Resources = append(inc.Resources, rr)
		r.do("incremental alter "+topic, inc)
		r.awaitConfig(topic, "min.compaction.lag.ms", "1000")
		r.do("describe "+topic+" after", describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, "cleanup.policy", "min.compaction.lag.ms", "segment.bytes"))
		legacy := kmsg.NewPtrAlterConfigsRequest()
		lr := kmsg.NewAlterConfigsRequestResource()
		lr.ResourceType, lr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
		lc := kmsg.NewAlterConfigsRequestResourceConfig()
		lc.Name, lc.Value = "cleanup.policy", str("compact")
		lr.Configs = append(lr.Configs, lc)
		legacy.Resources = append(legacy.Resources, lr)
		r.do("legacy alter "+topic, legacy)
		r.awaitConfig(topic, "min.compaction.lag.ms", "0")
		r.do("describe "+topic+" after legacy", describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, "cleanup.policy", "min.compaction.lag.ms", "segment.bytes"))
	}
}
