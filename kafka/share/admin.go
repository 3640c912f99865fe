package share

import (
	"sort"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeOffsets answers one group of DescribeShareGroupOffsets: each
// partition's start offset (SPSO) and, v1, its lag: the high watermark
// less the SPSO and the finished records in flight. A partition the
// group never read answers -1. Topics nil describes every partition with
// state. allowed is the principal's topic DESCRIBE (nil: everything): a
// named topic without it is answered without its id, each partition
// TOPIC_AUTHORIZATION_FAILED; of every topic (Topics nil) only those
// allowed are listed, as Kafka's KafkaApis.
func (c *Coordinator) DescribeOffsets(rg kmsg.DescribeShareGroupOffsetsRequestGroup, allowed Allowed) kmsg.DescribeShareGroupOffsetsResponseGroup {
	out := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
	out.GroupID = rg.GroupID
	g := c.lookup(rg.GroupID)
	if g == nil && c.ns != nil && c.ns.OtherGroup(rg.GroupID) {
		out.ErrorCode = kerr.GroupIDNotFound.Code
		return out
	}
	topics := rg.Topics
	if topics == nil && g != nil {
		topics = c.stateTopics(g)
	}
	for _, t := range topics {
		rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
		rt.Topic = t.Topic
		switch {
		case allowed == nil || allowed(t.Topic):
			rt.TopicID, _ = c.log.TopicID(t.Topic)
		case rg.Topics == nil:
			continue // all topics: only those the principal may describe
		}
		// A named topic the principal may not describe: no id, each
		// partition TOPIC_AUTHORIZATION_FAILED (describePartition).
		for _, part := range t.Partitions {
			rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
			rp.Partition, rp.StartOffset, rp.Lag = part, -1, -1
			c.describePartition(g, offsets.TopicPartition{Topic: t.Topic, Partition: part}, allowed, &rp)
			rt.Partitions = append(rt.Partitions, rp)
		}
		out.Topics = append(out.Topics, rt)
	}
	return out
}

func (c *Coordinator) describePartition(g *group, tp offsets.TopicPartition, allowed Allowed, rp *kmsg.DescribeShareGroupOffsetsResponseGroupTopicPartition) {
	if allowed != nil && !allowed(tp.Topic) {
		rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
		return
	}
	_, hwm, err := c.log.Bounds(tp.Topic, tp.Partition)
	if err != nil && !c.elsewhere(err) {
		rp.ErrorCode = c.log.Code(err)
		return
	}
	if g == nil {
		return
	}
	p, err := c.adminPartition(g, tp)
	if err != nil {
		rp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return
	}
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	rp.StartOffset, rp.LeaderEpoch = p.start, 0
	if err == nil {
		rp.Lag = max(0, hwm-p.start-p.doneLocked())
	}
}

// elsewhere reports whether a Bounds error only says another node leads
// the partition: the cluster's coordinator then answers from the durable
// state without the partition's bounds (the admin on leaders' states).
func (c *Coordinator) elsewhere(err error) bool {
	return c.adminViaStates() && c.log.Code(err) == kerr.NotLeaderForPartition.Code
}

// adminPartition is the state of tp the admin sees: the leaders' durable
// one in cluster mode (the admin on leaders' states), else the coordinator's own; nil if none.
func (c *Coordinator) adminPartition(g *group, tp offsets.TopicPartition) (*partition, error) {
	if c.adminViaStates() {
		sp, version, err := c.cfg.States.Load(g.id, tp)
		if err != nil || version == 0 {
			return nil, err
		}
		return loadPartition(sp), nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.parts[tp], nil
}

// statePartitions are the partitions g has state for: the durable ones in
// cluster mode (the admin on leaders' states), else the coordinator's own.
func (c *Coordinator) statePartitions(g *group) ([]offsets.TopicPartition, error) {
	if c.adminViaStates() {
		sps, err := c.cfg.States.List(g.id)
		tps := make([]offsets.TopicPartition, len(sps))
		for i, sp := range sps {
			tps[i] = sp.TopicPartition
		}
		return tps, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	tps := make([]offsets.TopicPartition, 0, len(g.mu.parts))
	for tp := range g.mu.parts {
		tps = append(tps, tp)
	}
	return tps, nil
}

// stateTopics lists the partitions g has state for, by topic.
func (c *Coordinator) stateTopics(g *group) []kmsg.DescribeShareGroupOffsetsRequestGroupTopic {
	tps, err := c.statePartitions(g)
	if err != nil {
		c.cfg.Logger.Warn("share-state-list-failed")
	}
	byTopic := map[string][]int32{}
	for _, tp := range tps {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	var out []kmsg.DescribeShareGroupOffsetsRequestGroupTopic
	for t, ps := range byTopic {
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		rt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
		rt.Topic, rt.Partitions = t, ps
		out = append(out, rt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Topic < out[j].Topic })
	return out
}

// emptyGroup returns the share group id for an offsets change, which Kafka
// allows only while the group has no members; a code when it may not.
func (c *Coordinator) emptyGroup(id string, create bool) (*group, int16) {
	g, err := c.getOrCreate(id, create)
	switch {
	case err != nil:
		return nil, kerr.CoordinatorNotAvailable.Code
	case g == nil:
		return nil, kerr.GroupIDNotFound.Code
	}
	g.mu.Lock()
	c.expireMembersLocked(g, c.cfg.Now())
	n := len(g.mu.members)
	g.mu.Unlock()
	if n > 0 {
		return nil, kerr.NonEmptyGroup.Code
	}
	return g, 0
}

// AlterOffsets handles AlterShareGroupOffsets: each named partition starts
// over at the given offset with nothing in flight, durably (the durable share-partition state).
func (c *Coordinator) AlterOffsets(req *kmsg.AlterShareGroupOffsetsRequest, allowed Allowed) *kmsg.AlterShareGroupOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	g, code := c.emptyGroup(req.GroupID, true)
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	for _, t := range req.Topics {
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		rt.TopicID, _ = c.log.TopicID(t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = c.alterOne(g, offsets.TopicPartition{Topic: t.Topic, Partition: p.Partition}, p.StartOffset, allowed)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (c *Coordinator) alterOne(g *group, tp offsets.TopicPartition, start int64, allowed Allowed) int16 {
	if allowed != nil && !allowed(tp.Topic) {
		return kerr.TopicAuthorizationFailed.Code
	}
	logStart, hwm, err := c.log.Bounds(tp.Topic, tp.Partition)
	if err != nil && !c.elsewhere(err) {
		return c.log.Code(err)
	}
	if start < 0 {
		return kerr.InvalidRequest.Code
	}
	if err == nil {
		start = min(max(start, logStart), hwm)
	}
	if c.adminViaStates() {
		if err := c.cfg.States.Reset(g.id, []offsets.SharePartition{{TopicPartition: tp, StartOffset: start}}, nil); err != nil {
			return kerr.CoordinatorNotAvailable.Code
		}
		return 0
	}
	w := offsets.ShareWrite{Group: g.id, Part: offsets.SharePartition{TopicPartition: tp, StartOffset: start}}
	if err := c.writer.submit(w).wait(); err != nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	g.mu.Lock()
	g.mu.parts[tp] = newPartition(start)
	g.mu.Unlock()
	return 0
}

// DeleteOffsets handles DeleteShareGroupOffsets: the named topics' state
// goes, so their partitions start over at share.auto.offset.reset.
func (c *Coordinator) DeleteOffsets(req *kmsg.DeleteShareGroupOffsetsRequest, allowed Allowed) *kmsg.DeleteShareGroupOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	g, code := c.emptyGroup(req.GroupID, false)
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		rt.TopicID, _ = c.log.TopicID(t.Topic)
		rt.ErrorCode = c.deleteTopic(g, t.Topic, allowed)
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (c *Coordinator) deleteTopic(g *group, topic string, allowed Allowed) int16 {
	if allowed != nil && !allowed(topic) {
		return kerr.TopicAuthorizationFailed.Code
	}
	if _, ok := c.log.Partitions(topic); !ok {
		return kerr.UnknownTopicOrPartition.Code
	}
	all, err := c.statePartitions(g)
	if err != nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	var tps []offsets.TopicPartition
	for _, tp := range all {
		if tp.Topic == topic {
			tps = append(tps, tp)
		}
	}
	if c.adminViaStates() {
		if err := c.cfg.States.Reset(g.id, nil, tps); err != nil {
			return kerr.CoordinatorNotAvailable.Code
		}
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	ws := make([]offsets.ShareWrite, len(tps))
	for i, tp := range tps {
		ws[i] = offsets.ShareWrite{Group: g.id, Part: offsets.SharePartition{TopicPartition: tp}, Delete: true}
	}
	if err := c.writer.submit(ws...).wait(); err != nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	for _, tp := range tps {
		delete(g.mu.parts, tp)
	}
	return 0
}
