package streams

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Topology is the processing topology a group's members share, as the
// first member to join sent it (KIP-1071): subtopologies, their source
// topics and the internal topics they read and write.
type Topology struct {
	Epoch         int32         `json:"epoch"`
	Subtopologies []Subtopology `json:"subtopologies"`
}

// Subtopology is one independently partitioned part of a topology; its
// tasks are its partitions (0..n-1).
type Subtopology struct {
	ID                      string      `json:"id"`
	SourceTopics            []string    `json:"sources,omitempty"`
	RepartitionSinkTopics   []string    `json:"repartitionSinks,omitempty"`
	StateChangelogTopics    []TopicInfo `json:"changelogs,omitempty"`
	RepartitionSourceTopics []TopicInfo `json:"repartitionSources,omitempty"`
	// CopartitionGroups index SourceTopics (Sources) and
	// RepartitionSourceTopics (Repartition): the topics of a group must
	// have one partition count.
	CopartitionGroups []CopartitionGroup `json:"copartition,omitempty"`
}

// CopartitionGroup is a set of co-partitioned topics of a subtopology, by
// index.
type CopartitionGroup struct {
	Sources     []int16 `json:"sources,omitempty"`
	Repartition []int16 `json:"repartition,omitempty"`
}

// TopicInfo is an internal topic a subtopology needs: Partitions 0 means
// derived from the topology (always so for changelogs), Replication 0
// the broker's default.
type TopicInfo struct {
	Name        string            `json:"name"`
	Partitions  int32             `json:"partitions,omitempty"`
	Replication int16             `json:"replication,omitempty"`
	Configs     map[string]string `json:"configs,omitempty"`
}

// stateful: a subtopology with state stores (changelogs) has standby
// and warm-up tasks; a stateless one only active tasks.
func (s *Subtopology) stateful() bool { return len(s.StateChangelogTopics) > 0 }

// TopologyFromRequest converts the heartbeat's topology, sorting
// subtopologies by id so that equal topologies compare equal.
func TopologyFromRequest(t *kmsg.StreamsGroupHeartbeatRequestTopology) *Topology {
	out := &Topology{Epoch: t.Epoch}
	info := func(in []kmsg.TopicInfo) []TopicInfo {
		var o []TopicInfo
		for _, ti := range in {
			x := TopicInfo{Name: ti.Topic, Partitions: ti.NumPartitions, Replication: ti.ReplicationFactor}
			for _, c := range ti.Configs {
				if x.Configs == nil {
					x.Configs = make(map[string]string)
				}
				x.Configs[c.Key] = c.Value
			}
			o = append(o, x)
		}
		return o
	}
	for _, st := range t.Subtopologies {
		s := Subtopology{
			ID: st.SubtopologyID, SourceTopics: st.SourceTopics, RepartitionSinkTopics: st.RepartitionSinkTopics,
			StateChangelogTopics: info(st.StateChangelogTopics), RepartitionSourceTopics: info(st.RepartitionSourceTopics),
		}
		for _, cg := range st.CopartitionGroups {
			s.CopartitionGroups = append(s.CopartitionGroups, CopartitionGroup{Sources: cg.SourceTopics, Repartition: cg.RepartitionSourceTopics})
		}
		out.Subtopologies = append(out.Subtopologies, s)
	}
	sort.Slice(out.Subtopologies, func(i, j int) bool { return out.Subtopologies[i].ID < out.Subtopologies[j].ID })
	return out
}

// validateTopology is the check a joining member's topology passes
// before any state (Kafka's StreamsInvalidTopologyException): changelog
// partition counts are the broker's to derive; subtopology ids are
// unique; copartition indexes name topics of their subtopology; no topic
// is both a source and internal, and every repartition sink topic is
// some subtopology's repartition source.
func validateTopology(t *kmsg.StreamsGroupHeartbeatRequestTopology) string {
	ids := make(map[string]bool)
	repSources := make(map[string]bool)
	for _, st := range t.Subtopologies {
		for _, ti := range st.RepartitionSourceTopics {
			repSources[ti.Topic] = true
		}
	}
	for _, st := range t.Subtopologies {
		for _, ti := range st.StateChangelogTopics {
			if ti.NumPartitions != 0 {
				return fmt.Sprintf("Changelog topic %s must have an undefined partition count, but it is set to %d.", ti.Topic, ti.NumPartitions)
			}
		}
		if ids[st.SubtopologyID] {
			return fmt.Sprintf("Subtopology %s is defined more than once.", st.SubtopologyID)
		}
		ids[st.SubtopologyID] = true
		for _, cg := range st.CopartitionGroups {
			for _, i := range cg.SourceTopics {
				if i < 0 || int(i) >= len(st.SourceTopics) {
					return fmt.Sprintf("Copartition group of subtopology %s names source topic index %d of %d.", st.SubtopologyID, i, len(st.SourceTopics))
				}
			}
			for _, i := range cg.RepartitionSourceTopics {
				if i < 0 || int(i) >= len(st.RepartitionSourceTopics) {
					return fmt.Sprintf("Copartition group of subtopology %s names repartition source topic index %d of %d.", st.SubtopologyID, i, len(st.RepartitionSourceTopics))
				}
			}
		}
		for _, sink := range st.RepartitionSinkTopics {
			if !repSources[sink] {
				return fmt.Sprintf("Repartition sink topic %s of subtopology %s is no subtopology's repartition source topic.", sink, st.SubtopologyID)
			}
		}
		for _, src := range st.SourceTopics {
			if repSources[src] {
				return fmt.Sprintf("Topic %s is both a source topic and a repartition source topic.", src)
			}
		}
	}
	return ""
}

// Metadata tells the partition count of an existing topic.
type Metadata interface {
	Partitions(topic string) (int32, bool)
}

// InternalTopic is an internal topic to create: a repartition topic or
// a changelog, with the partitions the topology derives and the configs
// it asks for (a changelog is compacted unless it asks otherwise).
type InternalTopic struct {
	Name        string
	Partitions  int32
	Replication int16
	Configs     map[string]string
	Changelog   bool
}

// Status codes of StreamsGroupHeartbeatResponse.Status.
const (
	StatusStaleTopology         int8 = 0
	StatusMissingSourceTopics   int8 = 1
	StatusIncorrectlyPartitions int8 = 2
	StatusMissingInternalTopics int8 = 3
	StatusShutdownApplication   int8 = 4
	StatusAssignmentDelayed     int8 = 5
)

// Configured is a topology checked against the topics that exist: the
// partition count of every subtopology when it is ready, otherwise why
// not (a status) and the internal topics to create.
type Configured struct {
	Partitions map[string]int32 // subtopology id -> tasks; nil unless ready
	// Internal are the derived partition counts of the internal topics
	// (repartition topics and changelogs), when they could be derived.
	Internal map[string]int32
	Status   int8
	Detail   string
	Create   []InternalTopic
	// Signature is the partition counts of every topic the topology
	// reads or writes: a change re-plans the group.
	Signature string
}

// Ready reports whether tasks can be assigned.
func (c *Configured) Ready() bool { return c.Partitions != nil }

// Configure derives the topology's partition counts (Kafka's
// InternalTopicManager): a subtopology has as many tasks as the most
// partitioned of its source and repartition source topics; a
// repartition topic without a fixed count takes the count of the
// subtopologies writing to it; co-partitioned repartition topics take
// their group's count; a changelog has its subtopology's count. Missing
// source topics, source topics of one copartition group with different
// counts, or internal topics missing or with another count than derived,
// make the topology not ready, with the status Kafka reports.
func Configure(t *Topology, md Metadata) *Configured {
	out := &Configured{}
	var sig strings.Builder
	var missing []string
	for _, s := range t.Subtopologies {
		for _, src := range s.SourceTopics {
			n, ok := md.Partitions(src)
			fmt.Fprintf(&sig, "%s=%d;", src, n)
			if !ok && !slices.Contains(missing, src) {
				missing = append(missing, src)
			}
		}
	}
	for _, s := range t.Subtopologies {
		for _, ti := range append(slices.Clone(s.RepartitionSourceTopics), s.StateChangelogTopics...) {
			n, _ := md.Partitions(ti.Name)
			fmt.Fprintf(&sig, "%s=%d;", ti.Name, n)
		}
	}
	out.Signature = sig.String()
	if len(missing) > 0 {
		sort.Strings(missing)
		out.Status, out.Detail = StatusMissingSourceTopics, fmt.Sprintf("Source topics %s are missing.", strings.Join(missing, ", "))
		return out
	}
	rep, err := repartitionCounts(t, md)
	if err != "" {
		out.Status, out.Detail = StatusIncorrectlyPartitions, err
		return out
	}
	parts := make(map[string]int32, len(t.Subtopologies))
	out.Internal = make(map[string]int32)
	for _, s := range t.Subtopologies {
		parts[s.ID] = subtopologyPartitions(&s, md, rep)
		for _, ti := range s.RepartitionSourceTopics {
			out.Internal[ti.Name] = rep[ti.Name]
		}
		for _, ti := range s.StateChangelogTopics {
			out.Internal[ti.Name] = parts[s.ID]
		}
	}
	var wrong, absent []string
	check := func(ti TopicInfo, want int32, changelog bool) {
		n, ok := md.Partitions(ti.Name)
		switch {
		case !ok:
			absent = append(absent, ti.Name)
			out.Create = append(out.Create, internalTopic(ti, want, changelog))
		case n != want:
			wrong = append(wrong, fmt.Sprintf("%s has %d partitions, expected %d", ti.Name, n, want))
		}
	}
	seen := make(map[string]bool)
	for _, s := range t.Subtopologies {
		for _, ti := range s.RepartitionSourceTopics {
			if !seen[ti.Name] {
				seen[ti.Name] = true
				check(ti, rep[ti.Name], false)
			}
		}
		for _, ti := range s.StateChangelogTopics {
			if !seen[ti.Name] {
				seen[ti.Name] = true
				check(ti, parts[s.ID], true)
			}
		}
	}
	switch {
	case len(wrong) > 0:
		out.Status, out.Detail = StatusIncorrectlyPartitions, "Internal topics are incorrectly partitioned: "+strings.Join(wrong, "; ")+"."
		out.Create = nil
	case len(absent) > 0:
		sort.Strings(absent)
		out.Status, out.Detail = StatusMissingInternalTopics, "Internal topics are missing: "+strings.Join(absent, ", ")
	default:
		out.Partitions = parts
	}
	return out
}

func internalTopic(ti TopicInfo, partitions int32, changelog bool) InternalTopic {
	it := InternalTopic{Name: ti.Name, Partitions: partitions, Replication: ti.Replication, Changelog: changelog, Configs: map[string]string{}}
	for k, v := range ti.Configs {
		it.Configs[k] = v
	}
	if _, ok := it.Configs["cleanup.policy"]; !ok {
		if changelog {
			it.Configs["cleanup.policy"] = "compact"
		} else {
			it.Configs["cleanup.policy"] = "delete"
		}
	}
	return it
}

func subtopologyPartitions(s *Subtopology, md Metadata, rep map[string]int32) int32 {
	var n int32
	for _, src := range s.SourceTopics {
		if p, _ := md.Partitions(src); p > n {
			n = p
		}
	}
	for _, ti := range s.RepartitionSourceTopics {
		if p := rep[ti.Name]; p > n {
			n = p
		}
	}
	return n
}

// repartitionCounts derives every repartition topic's partition count:
// fixed ones as given, the others from the subtopologies that write to
// them, to a fixed point (a topology is a DAG, so it is reached within
// as many rounds as there are subtopologies), then co-partitioned ones
// to their group's count. The error is INCORRECTLY_PARTITIONED_TOPICS's
// detail.
func repartitionCounts(t *Topology, md Metadata) (map[string]int32, string) {
	rep := make(map[string]int32)
	for _, s := range t.Subtopologies {
		for _, ti := range s.RepartitionSourceTopics {
			if ti.Partitions > 0 {
				rep[ti.Name] = ti.Partitions
			}
		}
	}
	for round := 0; round <= len(t.Subtopologies); round++ {
		changed := false
		for _, s := range t.Subtopologies {
			n := subtopologyPartitions(&s, md, rep)
			for _, sink := range s.RepartitionSinkTopics {
				if fixed(t, sink) || n <= rep[sink] {
					continue
				}
				rep[sink], changed = n, true
			}
		}
		if !changed {
			break
		}
	}
	for _, s := range t.Subtopologies {
		for _, cg := range s.CopartitionGroups {
			var want int32 = -1
			for _, i := range cg.Sources {
				n, _ := md.Partitions(s.SourceTopics[i])
				if want >= 0 && n != want {
					return nil, fmt.Sprintf("Following topics do not have the same number of partitions: %v", copartitionNames(&s, cg))
				}
				want = n
			}
			for _, i := range cg.Repartition {
				ti := s.RepartitionSourceTopics[i]
				if ti.Partitions > 0 {
					if want >= 0 && ti.Partitions != want {
						return nil, fmt.Sprintf("Following topics do not have the same number of partitions: %v", copartitionNames(&s, cg))
					}
					want = ti.Partitions
				}
			}
			if want < 0 {
				for _, i := range cg.Repartition {
					want = max(want, rep[s.RepartitionSourceTopics[i].Name])
				}
			}
			for _, i := range cg.Repartition {
				rep[s.RepartitionSourceTopics[i].Name] = want
			}
		}
	}
	for _, s := range t.Subtopologies {
		for _, ti := range s.RepartitionSourceTopics {
			if rep[ti.Name] <= 0 {
				return nil, fmt.Sprintf("Unable to determine the number of partitions of repartition topic %s.", ti.Name)
			}
		}
	}
	return rep, ""
}

func fixed(t *Topology, topic string) bool {
	for _, s := range t.Subtopologies {
		for _, ti := range s.RepartitionSourceTopics {
			if ti.Name == topic && ti.Partitions > 0 {
				return true
			}
		}
	}
	return false
}

func copartitionNames(s *Subtopology, cg CopartitionGroup) []string {
	var out []string
	for _, i := range cg.Sources {
		out = append(out, s.SourceTopics[i])
	}
	for _, i := range cg.Repartition {
		out = append(out, s.RepartitionSourceTopics[i].Name)
	}
	return out
}
