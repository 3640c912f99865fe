package config

import (
	"strconv"
	"time"

	"github.com/kgateway/kgateway/kafka/group"
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/kgateway/kgateway/kafka/txn"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/topicconfig"
)

// BrokerEntries describes, as BROKER configs, the settings of the wire
// server and its coordinators that Kafka names as broker configs, with
// their true (defaulted) values: node.id and broker.id,
// socket.request.max.bytes, default.replication.factor (always 1: a
// topic's one replica is its leader), and, when the coordinators run
// (Offsets set), the group session bounds, transaction.max.timeout.ms and
// offsets.retention.minutes. All are read-only (none changes at run
// time), as in Kafka. The node's own identity and request bound are
// STATIC_BROKER_CONFIG, as before; the others are DEFAULT_CONFIG at
// Kafka's default, else STATIC_BROKER_CONFIG over it (cfg: WithDefaults).
func (cfg Config) BrokerEntries() []topicconfig.Entry {
	id := strconv.Itoa(int(cfg.NodeID))
	out := []topicconfig.Entry{
		static("broker.id", id),
		static("node.id", id),
		static("socket.request.max.bytes", strconv.Itoa(int(cfg.MaxRequestBytes))),
		defaulted("default.replication.factor", 1, 1),
	}
	if cfg.Offsets == nil {
		return out // no group or transaction coordinator
	}
	g, t, s := cfg.Group, cfg.Txn, cfg.Share
	return append(out,
		ms("group.min.session.timeout.ms", g.MinSessionTimeout, group.DefaultMinSessionTimeout),
		ms("group.max.session.timeout.ms", g.MaxSessionTimeout, group.DefaultMaxSessionTimeout),
		ms("group.consumer.session.timeout.ms", g.ConsumerSessionTimeout, group.DefaultConsumerSessionTimeout),
		ms("group.consumer.min.session.timeout.ms", g.ConsumerMinSessionTimeout, group.DefaultConsumerMinSessionTimeout),
		ms("group.consumer.max.session.timeout.ms", g.ConsumerMaxSessionTimeout, group.DefaultConsumerMaxSessionTimeout),
		ms("group.share.session.timeout.ms", s.SessionTimeout, share.DefaultSessionTimeout),
		ms("transaction.max.timeout.ms", t.MaxTimeout, txn.DefaultMaxTimeout),
		defaulted("offsets.retention.minutes", cfg.Offsets.Retention().Minutes(), offsets.DefaultRetention.Minutes()))
}

// static is a setting of this node given at start, whatever its value.
func static(name, value string) topicconfig.Entry {
	return topicconfig.Entry{Name: name, Value: value, Source: topicconfig.SourceStaticBroker, ReadOnly: true, Type: topicconfig.TypeInt,
		Synonyms: []topicconfig.Synonym{{Name: name, Value: value, Source: topicconfig.SourceStaticBroker}}}
}

// ms is a duration setting in milliseconds; zero or less in cfg is its
// default, as the coordinators read it.
func ms(name string, d, def time.Duration) topicconfig.Entry {
	if d <= 0 {
		d = def
	}
	return defaulted(name, float64(d.Milliseconds()), float64(def.Milliseconds()))
}

// defaulted is an INT setting: DEFAULT_CONFIG at Kafka's default, else
// STATIC_BROKER_CONFIG (a flag set it) over the default.
func defaulted(name string, v, def float64) topicconfig.Entry {
	value, dv := strconv.FormatInt(int64(v), 10), strconv.FormatInt(int64(def), 10)
	e := topicconfig.Entry{Name: name, Value: value, Source: topicconfig.SourceDefault, ReadOnly: true, Type: topicconfig.TypeInt,
		Default: true, Synonyms: []topicconfig.Synonym{{Name: name, Value: dv, Source: topicconfig.SourceDefault}}}
	if value != dv {
		e.Source, e.Default = topicconfig.SourceStaticBroker, false
		e.Synonyms = append([]topicconfig.Synonym{{Name: name, Value: value, Source: topicconfig.SourceStaticBroker}}, e.Synonyms...)
	}
	return e
}
