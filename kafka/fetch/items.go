package fetch

import (
	"github.com/kgateway/kgateway/kafka/fetchsession"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Item is one partition a fetch reads: from the request (full or
// sessionless fetch) or from the session (incremental fetch).
type Item struct {
	Name     string   // resolved topic name; "" when unknown
	ReqTopic string   // the topic name as requested (v < 13)
	ID       [16]byte // the topic id as requested (v13+)
	ErrID    bool     // requested by an id we do not know (v13+)
	Refused  bool     // the principal may not READ the topic (per-API authorization)
	rp       kmsg.FetchRequestTopicPartition
	sp       *fetchsession.Part // nil without a session
	// quiet is the session's last read of it that found nothing new
	// (fetchsession.Quiet), copied under the session's lock.
	quiet fetchsession.Quiet
	// The partition resolved once for the request (Item.resolve): the
	// long poll's registration and every read of it go through h.
	resolved bool
	h        resolver.Partition
	herr     error
}

// Label is the topic name a response carries for it.
func (it *Item) Label() string {
	if it.Name != "" {
		return it.Name
	}
	return it.ReqTopic
}

// resolve resolves its partition once per request (Host.Resolve);
// later calls return the first answer.
func (it *Item) resolve(h Host) (resolver.Partition, error) {
	if !it.resolved {
		it.h, it.herr = h.Resolve(it.Name, it.rp.Partition)
		it.resolved = true
	}
	return it.h, it.herr
}

// firedKey names the item in a Waiter's fired set (resolver.Partition's
// WatchKey once resolved): a companion topic's item by its source's
// partition, whose appends fire the Waiter.
func (it *Item) firedKey() resolver.PartitionKey {
	if it.resolved && it.herr == nil {
		return it.h.WatchKey()
	}
	return resolver.PartitionKey{Topic: it.Name, Partition: it.rp.Partition}
}

// requestItems lists the request's partitions in request order; withSess
// gives each a session entry for the session a full fetch opens.
func (f *Fetcher) requestItems(r *kmsg.FetchRequest, withSess bool) []Item {
	var items []Item
	seen := make(map[fetchsession.Key]int) // partition -> its index in items
	for i := range r.Topics {
		rt := &r.Topics[i]
		name, errID := f.topicName(r.Version, rt.Topic, rt.TopicID)
		for _, rp := range rt.Partitions {
			k := fetchsession.KeyOf(r.Version >= 13, rt.Topic, rt.TopicID, rp.Partition)
			it := Item{Name: name, ReqTopic: rt.Topic, ID: rt.TopicID, ErrID: errID, rp: rp}
			if withSess {
				it.sp = &fetchsession.Part{Key: k, Offset: rp.FetchOffset, MaxBytes: rp.PartitionMaxBytes,
					LeaderEpoch: rp.CurrentLeaderEpoch}
			}
			// A partition listed twice is read once: Kafka keys the
			// request's partitions in an insertion-ordered map, so the
			// last listing's fields win at the first listing's place.
			if j, dup := seen[k]; dup {
				items[j] = it
				continue
			}
			seen[k] = len(items)
			items = append(items, it)
		}
	}
	return items
}

// sessionItems lists a session's partitions (in its response order) into
// items, as long as order, with the fetch offsets and max bytes the
// client last asked for. Needs the session's lock
// (fetchsession.Cache.Begin).
func (f *Fetcher) sessionItems(topicIDs bool, order []*fetchsession.Part, items []Item) []Item {
	version := int16(12)
	if topicIDs {
		version = 13
	}
	var (
		name  string
		errID bool
	)
	for i, sp := range order {
		// Consecutive partitions of one topic share a lookup (a session
		// lists a topic's partitions together until rotation moves some).
		if i == 0 || sp.Key.ID != order[i-1].Key.ID || sp.Key.Topic != order[i-1].Key.Topic {
			name, errID = f.topicName(version, sp.Key.Topic, sp.Key.ID)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = sp.Key.Partition, sp.Offset, sp.MaxBytes
		rp.CurrentLeaderEpoch = sp.LeaderEpoch
		items[i] = Item{Name: name, ReqTopic: sp.Key.Topic, ID: sp.Key.ID, ErrID: errID, rp: rp, sp: sp, quiet: sp.Quiet}
	}
	return items
}

// topicName resolves a requested topic: by name before v13, by id after.
func (f *Fetcher) topicName(version int16, topic string, id [16]byte) (name string, errID bool) {
	if version < 13 {
		return topic, false
	}
	if name, ok := f.Host.TopicByID(id); ok {
		return name, false
	}
	return "", true
}

// assembleTopics groups the answered partitions by topic, in item order;
// keep, when set, selects which partitions an incremental response
// carries.
func assembleTopics(items []Item, parts []kmsg.FetchResponseTopicPartition, keep func(*Item, *kmsg.FetchResponseTopicPartition) bool) []kmsg.FetchResponseTopic {
	var topics []kmsg.FetchResponseTopic
	for i := range items {
		it, p := &items[i], &parts[i]
		if it.sp != nil {
			it.sp.GotData = len(p.RecordBatches) > 0
		}
		if keep != nil && !keep(it, p) {
			continue
		}
		if n := len(topics); n == 0 || topics[n-1].Topic != it.Label() || topics[n-1].TopicID != it.ID {
			t := kmsg.NewFetchResponseTopic()
			t.Topic, t.TopicID = it.Label(), it.ID
			topics = append(topics, t)
		}
		t := &topics[len(topics)-1]
		t.Partitions = append(t.Partitions, *p)
	}
	return topics
}
