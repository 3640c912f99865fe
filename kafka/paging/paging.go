// Package paging cuts a DescribeTopicPartitions answer (KIP-966) into
// pages: topics in name order, at most a limit of partitions per
// response, and a cursor (topic, first partition) where the next page
// starts.
//
// The rules are Kafka's (DescribeTopicPartitionsRequestHandler and its
// metadata cache):
//
//   - Only topics whose name sorts at or after the cursor's topic are
//     described; the cursor's topic starts at the cursor's partition,
//     every other topic at 0.
//   - The limit is the request's, capped by the broker's
//     max.request.partition.size.limit and raised to at least 1.
//   - Topics are taken in name order while partitions remain: a topic
//     gets its partitions from its start up to the limit left. A topic
//     cut short ends the page, with the cursor at its first partition
//     left out; a topic reached with no partition left ends the page
//     with the cursor at its partition 0 (whether it exists or not).
//   - A start past a topic's last partition describes none of them.
//   - A topic that does not exist takes no partition: it is an error
//     entry when named, and left out of an all-topics answer.
package paging

import "slices"

// Mark is where a page starts: a topic and its first partition.
type Mark struct {
	Topic     string
	Partition int32
}

// Entry is one topic of a page: its partitions [From, To), or Missing.
type Entry struct {
	Topic    string
	From, To int32
	Missing  bool
}

// Page is the topics a response describes and where the next one starts
// (nil: this is the last page).
type Page struct {
	Entries []Entry
	Next    *Mark
}

// Limit is the partition limit a request gets: its own, capped at the
// broker's maximum, at least 1.
func Limit(requested, brokerMax int32) int32 { return max(min(requested, brokerMax), 1) }

// Cut pages names (any order; each taken once) from cursor (nil: from the
// start), with partitions reporting each topic's partition count (false:
// it does not exist). all leaves missing topics out.
func Cut(names []string, partitions func(string) (int32, bool), cursor *Mark, limit int32, all bool) Page {
	from := ""
	if cursor != nil {
		from = cursor.Topic
	}
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	var page Page
	remaining := limit
	for _, name := range names {
		if name < from {
			continue
		}
		if remaining <= 0 {
			page.Next = &Mark{Topic: name}
			return page
		}
		n, ok := partitions(name)
		if !ok {
			if !all {
				page.Entries = append(page.Entries, Entry{Topic: name, Missing: true})
			}
			continue
		}
		start := int32(0)
		if cursor != nil && name == cursor.Topic {
			start = cursor.Partition
		}
		upper := int32(min(int64(n), int64(start)+int64(remaining)))
		page.Entries = append(page.Entries, Entry{Topic: name, From: start, To: max(upper, start)})
		if upper < n {
			page.Next = &Mark{Topic: name, Partition: upper}
			return page
		}
		remaining -= max(upper-start, 0)
	}
	return page
}
