// Package topicid serves the request versions that name topics by id
// instead of by name (KIP-516): Produce v13, OffsetCommit v10, OffsetFetch
// v10 and TxnOffsetCommit v6. Their handlers, and the authorization rules
// before them, work on names; this package sits around both.
//
// Before: every topic id of the request is looked up and its name written
// into the request's name field (which the wire does not carry at these
// versions). A topic whose id names no topic is taken out of the request,
// so that neither authorization nor the handler sees it, and is answered
// UNKNOWN_TOPIC_ID partition by partition, as Kafka answers it, unless a
// request-level refusal outranks it (Completion.Outranked). When no topic
// is left (Completion.NoneKnown) the caller answers without the handler,
// as Kafka answers without its coordinator.
//
// After: the unknown ids' answers are added where Kafka puts them (before
// the coordinator's answers in OffsetCommit and TxnOffsetCommit, after
// them in Produce and OffsetFetch), and every topic of the response gets
// its id back: the request's for its names (one id per name while the
// request is served), the lookup's for topics the response adds itself
// (an OffsetFetch of all topics). A committed topic the lookup no longer
// knows (deleted since) cannot be named to a client that speaks ids, and
// is left out.
//
// Invariant: a request at a version that names topics by name passes
// untouched (Translate returns nil).
package topicid

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Lookup resolves topics both ways, internal topics included.
type Lookup interface {
	NameOf(id [16]byte) (string, bool)
	IDOf(name string) ([16]byte, bool)
}

// RequestedByID reports whether a requested topic names its topic by id: a
// non-zero id, whatever the name, as Kafka's KafkaApis decides (the Java
// Admin's describeTopics by id sends name "" beside the id, not null), or
// no name at all.
func RequestedByID(rt *kmsg.MetadataRequestTopic) bool {
	return rt.TopicID != [16]byte{} || rt.Topic == nil
}

// Versions from which each API names topics by id.
const (
	ProduceVersion         = 13
	OffsetCommitVersion    = 10
	OffsetFetchVersion     = 10
	TxnOffsetCommitVersion = 6
)

// Completion finishes a response to a translated request: the unknown ids'
// errors and every topic's id. Unknown reports whether any topic was
// unknown, for a request that gets no response (Produce with acks=0),
// which must then fail as Kafka fails it: by closing the connection.
type Completion struct {
	complete func(kmsg.Response)
	Unknown  bool
	// NoneKnown: the request named topics and every one is unknown, so
	// nothing is left for the handler. Kafka then answers without its
	// coordinator (which would otherwise, say, create the group of an
	// empty OffsetCommit); so must the caller.
	NoneKnown bool
	// code is what an unknown id's partitions are answered:
	// UNKNOWN_TOPIC_ID unless a request-level refusal outranks it.
	code int16
}

// Outranked makes an unknown id's partitions answer code instead of
// UNKNOWN_TOPIC_ID (0: no change): Kafka checks the transactional id
// and the group before it resolves topic ids, and refuses every topic of
// a request whose transactional id or group the principal may not use.
func (c *Completion) Outranked(code int16) {
	if c != nil && code != 0 {
		c.code = code
	}
}

// Complete finishes resp; resp may be nil (no response is sent).
func (c *Completion) Complete(resp kmsg.Response) {
	if c != nil && resp != nil {
		c.complete(resp)
	}
}

func newCompletion(named, unknown int, complete func(kmsg.Response)) *Completion {
	return &Completion{complete: complete, Unknown: unknown > 0, NoneKnown: named > 0 && unknown == named, code: unknownID}
}

// Translate rewrites req's topic ids to names (see the package comment);
// nil when req names its topics by name.
func Translate(req kmsg.Request, l Lookup) *Completion {
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		if r.Version >= ProduceVersion {
			return produce(r, l)
		}
	case *kmsg.OffsetCommitRequest:
		if r.Version >= OffsetCommitVersion {
			return offsetCommit(r, l)
		}
	case *kmsg.OffsetFetchRequest:
		if r.Version >= OffsetFetchVersion {
			return offsetFetch(r, l)
		}
	case *kmsg.TxnOffsetCommitRequest:
		if r.Version >= TxnOffsetCommitVersion {
			return txnOffsetCommit(r, l)
		}
	}
	return nil
}

// ids remembers the id each name of a request was given.
type ids map[string][16]byte

// resolve names *id's topic in *name; false (and the topic is taken out)
// when the id is unknown.
func (m ids) resolve(l Lookup, id [16]byte, name *string) bool {
	n, ok := l.NameOf(id)
	if !ok {
		return false
	}
	*name, m[n] = n, id
	return true
}

// idOf is the id to answer for name: the request's, else the lookup's.
func (m ids) idOf(l Lookup, name string) ([16]byte, bool) {
	if id, ok := m[name]; ok {
		return id, true
	}
	return l.IDOf(name)
}

// keep filters list in place, returning the elements dropped.
func keep[T any](list *[]T, ok func(*T) bool) []T {
	var kept, dropped []T
	for i := range *list {
		if ok(&(*list)[i]) {
			kept = append(kept, (*list)[i])
		} else {
			dropped = append(dropped, (*list)[i])
		}
	}
	*list = kept
	return dropped
}

var unknownID = kerr.UnknownTopicID.Code

func produce(r *kmsg.ProduceRequest, l Lookup) *Completion {
	m, named := ids{}, len(r.Topics)
	unknown := keep(&r.Topics, func(t *kmsg.ProduceRequestTopic) bool { return m.resolve(l, t.TopicID, &t.Topic) })
	var c *Completion
	c = newCompletion(named, len(unknown), func(resp kmsg.Response) {
		pr := resp.(*kmsg.ProduceResponse)
		for i := range pr.Topics {
			pr.Topics[i].TopicID, _ = m.idOf(l, pr.Topics[i].Topic)
		}
		for _, t := range unknown {
			rt := kmsg.NewProduceResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = p.Partition, c.code, -1, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			pr.Topics = append(pr.Topics, rt)
		}
	})
	return c
}

func offsetCommit(r *kmsg.OffsetCommitRequest, l Lookup) *Completion {
	m, named := ids{}, len(r.Topics)
	unknown := keep(&r.Topics, func(t *kmsg.OffsetCommitRequestTopic) bool { return m.resolve(l, t.TopicID, &t.Topic) })
	var c *Completion
	c = newCompletion(named, len(unknown), func(resp kmsg.Response) {
		or := resp.(*kmsg.OffsetCommitResponse)
		for i := range or.Topics {
			or.Topics[i].TopicID, _ = m.idOf(l, or.Topics[i].Topic)
		}
		var first []kmsg.OffsetCommitResponseTopic
		for _, t := range unknown {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, c.code
				rt.Partitions = append(rt.Partitions, rp)
			}
			first = append(first, rt)
		}
		or.Topics = append(first, or.Topics...) // Kafka's order: refused first
	})
	return c
}

func txnOffsetCommit(r *kmsg.TxnOffsetCommitRequest, l Lookup) *Completion {
	m, named := ids{}, len(r.Topics)
	unknown := keep(&r.Topics, func(t *kmsg.TxnOffsetCommitRequestTopic) bool { return m.resolve(l, t.TopicID, &t.Topic) })
	var c *Completion
	c = newCompletion(named, len(unknown), func(resp kmsg.Response) {
		tr := resp.(*kmsg.TxnOffsetCommitResponse)
		for i := range tr.Topics {
			tr.Topics[i].TopicID, _ = m.idOf(l, tr.Topics[i].Topic)
		}
		var first []kmsg.TxnOffsetCommitResponseTopic
		for _, t := range unknown {
			rt := kmsg.NewTxnOffsetCommitResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, c.code
				rt.Partitions = append(rt.Partitions, rp)
			}
			first = append(first, rt)
		}
		tr.Topics = append(first, tr.Topics...) // as OffsetCommit's
	})
	return c
}

// offsetFetch translates each group's topics. A group asking for all
// topics (null) gets every committed topic the lookup still knows. Groups
// are answered each on its own, a refused group by its own error code,
// so nothing outranks an unknown id and NoneKnown is never set: the
// coordinator reads, and creates nothing.
func offsetFetch(r *kmsg.OffsetFetchRequest, l Lookup) *Completion {
	m := ids{}
	unknown := map[string][]kmsg.OffsetFetchRequestGroupTopic{}
	any := false
	for i := range r.Groups {
		g := &r.Groups[i]
		if g.Topics == nil {
			continue
		}
		u := keep(&g.Topics, func(t *kmsg.OffsetFetchRequestGroupTopic) bool { return m.resolve(l, t.TopicID, &t.Topic) })
		if g.Topics == nil {
			g.Topics = []kmsg.OffsetFetchRequestGroupTopic{} // still not "all topics"
		}
		unknown[g.Group] = append(unknown[g.Group], u...)
		any = any || len(u) > 0
	}
	return &Completion{Unknown: any, code: unknownID, complete: func(resp kmsg.Response) {
		fr := resp.(*kmsg.OffsetFetchResponse)
		for i := range fr.Groups {
			g := &fr.Groups[i]
			keep(&g.Topics, func(t *kmsg.OffsetFetchResponseGroupTopic) bool {
				id, ok := m.idOf(l, t.Topic)
				t.TopicID = id
				return ok
			})
			if g.ErrorCode != 0 {
				continue // the group's error stands for its topics
			}
			for _, t := range unknown[g.Group] {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.TopicID = t.TopicID
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					rp.Partition, rp.ErrorCode, rp.Offset, rp.LeaderEpoch, rp.Metadata = p, unknownID, -1, -1, kmsg.StringPtr("")
					rt.Partitions = append(rt.Partitions, rp)
				}
				g.Topics = append(g.Topics, rt)
			}
		}
	}}
}
