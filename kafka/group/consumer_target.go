package group

import (
	"maps"
	"regexp"
	"time"
)

// TopicInfo is one topic as the consumer protocol's assignors see it.
type TopicInfo struct {
	Name       string
	ID         [16]byte
	Partitions int32
}

// TopicLister lists the topics consumer groups may subscribe to: every
// topic, internal ones included, as Kafka's broker matches them (server-side regex subscriptions).
// Without one, consumer groups get no partitions.
type TopicLister interface {
	Topics() []TopicInfo
}

// Bounds on what one member may ask the server to resolve (server-side regex subscriptions), so that
// a heartbeat's cost is bounded.
const (
	maxSubscribedTopics = 10000 // topic names per member
	maxRegexLen         = 1024  // bytes of SubscribedTopicRegex
	maxGroupRegexes     = 64    // distinct regexes per group
	// metadataRefresh is how often a group compares its subscribed
	// topics' metadata with the topics now, on a heartbeat.
	metadataRefresh = time.Second
)

// compileRegex compiles an RE2 subscription regex; Kafka matches it
// against whole topic names.
func compileRegex(s string) (*regexp.Regexp, error) {
	if len(s) > maxRegexLen {
		return nil, errRegexTooLong
	}
	return regexp.Compile("^(?:" + s + ")$")
}

type regexError string

func (e regexError) Error() string { return string(e) }

const errRegexTooLong = regexError("regex too long")

// resolveLocked is the subscribed-topics metadata of the group now: the
// union of every member's topic names and regex matches, and each
// member's subscribed topic ids.
func (g *group) resolveLocked() (map[topicID]topicMeta, map[string]map[topicID]bool) {
	cs := g.mu.cons
	var all []TopicInfo
	if g.c.cfg.Metadata != nil {
		all = g.c.cfg.Metadata.Topics()
	}
	byName := make(map[string]TopicInfo, len(all))
	for _, t := range all {
		byName[t.Name] = t
	}
	// One pass over the topics per distinct regex.
	matched := make(map[string][]TopicInfo)
	for src, re := range cs.regexes {
		for _, t := range all {
			if re.MatchString(t.Name) {
				matched[src] = append(matched[src], t)
			}
		}
	}
	topics := make(map[topicID]topicMeta)
	subs := make(map[string]map[topicID]bool, len(cs.members))
	mayDescribe := g.describeCheckLocked()
	for _, m := range cs.members {
		set := make(map[topicID]bool)
		add := func(t TopicInfo) {
			if t.Partitions <= 0 || !mayDescribe(m, t.Name) {
				return
			}
			set[t.ID] = true
			topics[t.ID] = topicMeta{t.Name, t.Partitions}
		}
		for _, name := range m.topics {
			if t, ok := byName[name]; ok {
				add(t)
			}
		}
		if m.regex != "" {
			for _, t := range matched[m.regex] {
				add(t)
			}
		}
		subs[m.id] = set
	}
	return topics, subs
}

// describeCheckLocked is whether a member may be subscribed to a topic:
// always without Config.MayDescribe; with it, whether the member's own
// principal may DESCRIBE the topic, as Kafka drops from a regex's
// matches the topics the member may not describe
// (GroupMetadataManager.refreshRegularExpressions). The check is per
// member, not per group: one resolution serves members of several
// principals, and none is given a topic it may not see. Answers are
// cached per principal, host and topic for the one resolution.
func (g *group) describeCheckLocked() func(m *cmember, topic string) bool {
	may := g.c.cfg.MayDescribe
	if may == nil {
		return func(*cmember, string) bool { return true }
	}
	type key struct{ principal, host, topic string }
	seen := make(map[key]bool)
	return func(m *cmember, topic string) bool {
		if m.principal == "" {
			return false // loaded from the store, not yet heartbeated
		}
		k := key{m.principal, m.peerHost, topic}
		ok, done := seen[k]
		if !done {
			ok = may(m.principal, m.peerHost, topic)
			seen[k] = ok
		}
		return ok
	}
}

// syncRegexesLocked keeps the compiled regexes to those members use.
func (cs *consumerState) syncRegexes() {
	used := make(map[string]bool)
	for _, m := range cs.members {
		if m.regex != "" {
			used[m.regex] = true
		}
	}
	for src := range cs.regexes {
		if !used[src] {
			delete(cs.regexes, src)
		}
	}
	for src := range used {
		if cs.regexes[src] == nil {
			if re, err := compileRegex(src); err == nil {
				cs.regexes[src] = re
			}
		}
	}
}

// preferredAssignor is the assignor most members name (ties to the
// configured order), else the configured default, as Kafka picks it.
func (g *group) preferredAssignorLocked() string {
	votes := make(map[string]int)
	for _, m := range g.mu.cons.members {
		if m.assignor != "" {
			votes[m.assignor]++
		}
	}
	best, n := g.c.cfg.ConsumerAssignors[0], 0
	for _, a := range g.c.cfg.ConsumerAssignors {
		if votes[a] > n {
			best, n = a, votes[a]
		}
	}
	return best
}

// bumpLocked advances the group epoch and computes the new target
// assignment at once (so the group is never left Assigning).
func (g *group) bumpLocked() {
	cs := g.mu.cons
	cs.epoch++
	if g.mu.deferTarget {
		g.mu.targetDue = true // computed once for the batch's joins (consumer_joins.go)
		return
	}
	g.computeTargetLocked()
}

func (g *group) computeTargetLocked() {
	cs := g.mu.cons
	cs.syncRegexes()
	topics, subs := g.resolveLocked()
	spec := assignSpec{subscribed: subs, partitions: make(map[topicID]int32, len(topics)), previous: cs.target}
	for id, t := range topics {
		spec.partitions[id] = t.partitions
	}
	for _, m := range cs.sortedMembers() {
		spec.members = append(spec.members, m.id)
	}
	cs.assignor = g.preferredAssignorLocked()
	cs.target = assign(cs.assignor, spec)
	cs.topics, cs.subs = topics, subs
	cs.assignmentEpoch = cs.epoch
	cs.checked = g.c.clock.Now()
}

// refreshMetadataLocked implements server-side regex subscriptions: at most once per metadataRefresh, the
// subscribed topics are resolved again (names and regexes against the
// topics now, and the ACLs now); if any appeared, went or changed
// partitions, or a member's subscribed set changed (its principal lost
// or gained DESCRIBE), the group epoch advances and the target is
// recomputed. It reports a bump.
func (g *group) refreshMetadataLocked() bool {
	cs := g.mu.cons
	now := g.c.clock.Now()
	if now.Sub(cs.checked) < metadataRefresh {
		return false
	}
	cs.checked = now
	topics, subs := g.resolveLocked()
	if maps.Equal(topics, cs.topics) && (cs.subs == nil || subsEqual(subs, cs.subs)) {
		return false
	}
	g.bumpLocked()
	return true
}

// subsEqual compares two members-to-topics maps.
func subsEqual(a, b map[string]map[topicID]bool) bool {
	return maps.EqualFunc(a, b, func(x, y map[topicID]bool) bool { return maps.Equal(x, y) })
}
