package kafka

// Fetch (key 1), versions 4–13.
//
//   v4  isolation level, last stable offset, aborted transactions.
//   v5  log start offset.        v6  nothing new.
//   v7  fetch sessions (KIP-227).  v8–v10  nothing new (v10: zstd).
//   v9  current leader epoch.    v11 rack, preferred read replica.
//   v12 flexible, last fetched epoch.   v13 topic ids instead of names.
//
// Sessions are not kept: every response has session id 0, so clients send
// full fetches and get every requested partition back; a request naming a
// session (or an incremental epoch) gets FETCH_SESSION_ID_NOT_FOUND. Each partition
// carries high watermark, last stable offset and log start offset, error or
// not. The first batch of the first non-empty partition is returned whole
// even past the limits (KIP-74); later ones only within budget. Batches
// are served as stored (whole, validated by the resolver); a fetch inside a
// batch returns that whole batch. When fewer than MinBytes are ready the
// fetch waits on the resolver's append channels, a timer and the
// connection: it never polls.
// Left out: sessions, leader-epoch fencing and diverging epochs (one
// leader epoch, 0), preferred replicas, v14+ (tiered storage, KIP-903).

import (
	"reflect"
	"time"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchTopic is one requested topic resolved to a name once per request.
type fetchTopic struct {
	name  string // "" when unknown
	errID bool   // requested by an id we do not know (v13+)
	req   *kmsg.FetchRequestTopic
}

func handleFetch(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.FetchRequest)
	if r.Version >= 7 && (r.SessionID != 0 || r.SessionEpoch > 0) {
		// An incremental fetch in a session we never created (we always
		// answer session id 0): the client resets and sends a full fetch.
		resp := r.ResponseKind().(*kmsg.FetchResponse)
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		return resp, nil
	}
	topics := s.resolveFetchTopics(r)
	var timer *time.Timer
	for {
		var watches []<-chan struct{}
		canWait := r.MaxWaitMillis > 0 && r.MinBytes > 0
		if canWait {
			// Register before reading so an append between the read
			// and the wait is not missed.
			watches = s.fetchWatches(topics)
		}
		resp, n, failed := s.fetchOnce(r, topics)
		if !canWait || failed || n >= int(r.MinBytes) {
			return resp, nil
		}
		if timer == nil {
			timer = time.NewTimer(time.Duration(r.MaxWaitMillis) * time.Millisecond)
			defer timer.Stop()
		}
		if !s.waitAny(rc, watches, timer.C) {
			return resp, nil
		}
	}
}

func (s *Server) resolveFetchTopics(r *kmsg.FetchRequest) []fetchTopic {
	out := make([]fetchTopic, len(r.Topics))
	for i := range r.Topics {
		rt := &r.Topics[i]
		out[i].req = rt
		if r.Version < 13 {
			out[i].name = rt.Topic
			continue
		}
		if t, ok := s.res.TopicByID(resolver.TopicID(rt.TopicID)); ok {
			out[i].name = t.Name
		} else {
			out[i].errID = true
		}
	}
	return out
}

// fetchWatches returns the append channels of every known partition.
func (s *Server) fetchWatches(topics []fetchTopic) []<-chan struct{} {
	var ws []<-chan struct{}
	for _, t := range topics {
		if t.name == "" {
			continue
		}
		for _, p := range t.req.Partitions {
			if ch, err := s.res.Watch(t.name, p.Partition); err == nil {
				ws = append(ws, ch)
			}
		}
	}
	return ws
}

// waitAny waits for an append on any watched partition (true), or for the
// timer, the connection dying or the server closing (false).
func (s *Server) waitAny(rc *reqCtx, watches []<-chan struct{}, timeout <-chan time.Time) bool {
	defer rc.addWait(time.Now()) // a long poll is not handling time
	cases := make([]reflect.SelectCase, 0, len(watches)+3)
	for _, fixed := range []any{timeout, rc.ctx.Done(), s.closing} {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(fixed)})
	}
	for _, w := range watches {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(w)})
	}
	chosen, _, _ := reflect.Select(cases)
	return chosen >= 3
}

// fetchOnce reads every requested partition under the request's byte
// budget. It returns the response, the bytes it carries, and whether a
// partition failed (an error answers at once, like Kafka's DelayedFetch).
func (s *Server) fetchOnce(r *kmsg.FetchRequest, topics []fetchTopic) (*kmsg.FetchResponse, int, bool) {
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	resp.SessionID = 0
	budget := int(r.MaxBytes)
	total, failed := 0, false
	iso := resolver.Isolation(r.IsolationLevel)
	resp.Topics = make([]kmsg.FetchResponseTopic, len(topics))
	for i, t := range topics {
		rt := &resp.Topics[i]
		*rt = kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.req.Topic, t.req.TopicID
		if t.name != "" {
			rt.Topic = t.name
		}
		rt.Partitions = make([]kmsg.FetchResponseTopicPartition, len(t.req.Partitions))
		for j, rp := range t.req.Partitions {
			out := &rt.Partitions[j]
			if t.errID {
				*out = fetchError(rp.Partition, kerr.UnknownTopicID)
				failed = true
				continue
			}
			maxBytes := min(int(rp.PartitionMaxBytes), budget-total)
			minOne := total == 0 // KIP-74: only until some partition has data
			*out = s.fetchPartition(t.name, rp, maxBytes, iso, minOne)
			total += len(out.RecordBatches)
			failed = failed || out.ErrorCode != 0
		}
	}
	return resp, total, failed
}

// fetchPartition reads one partition; the bounds are set on every answer.
func (s *Server) fetchPartition(topic string, rp kmsg.FetchRequestTopicPartition, maxBytes int, iso resolver.Isolation, minOne bool) kmsg.FetchResponseTopicPartition {
	if _, err := s.partitionOf(topic, rp.Partition, false); err != nil {
		return fetchError(rp.Partition, err)
	}
	if maxBytes <= 0 && !minOne {
		// Budget spent: report the bounds only.
		return s.fetchBoundsOnly(topic, rp.Partition, nil)
	}
	res, err := s.res.Fetch(topic, rp.Partition, resolver.Offset(rp.FetchOffset), max(maxBytes, 0), iso, minOne)
	if err != nil {
		return s.fetchBoundsOnly(topic, rp.Partition, err)
	}
	out := kmsg.NewFetchResponseTopicPartition()
	out.Partition = rp.Partition
	out.HighWatermark = int64(res.HighWatermark)
	out.LastStableOffset = int64(res.LastStable)
	out.LogStartOffset = int64(res.LogStart)
	out.RecordBatches = concatBatches(res.Batches, res.Bytes)
	return out
}

// fetchBoundsOnly answers a partition without records, with err's code.
func (s *Server) fetchBoundsOnly(topic string, partition int32, err error) kmsg.FetchResponseTopicPartition {
	out := fetchError(partition, err)
	if start, hwm, lso, berr := s.res.Bounds(topic, partition); berr == nil {
		out.LogStartOffset, out.HighWatermark, out.LastStableOffset = int64(start), int64(hwm), int64(lso)
	} else if err == nil {
		out.ErrorCode = errCode(berr)
	}
	return out
}

func fetchError(partition int32, err error) kmsg.FetchResponseTopicPartition {
	out := kmsg.NewFetchResponseTopicPartition()
	out.Partition = partition
	out.ErrorCode = errCode(err)
	out.HighWatermark, out.LastStableOffset, out.LogStartOffset = -1, -1, -1
	return out
}

// concatBatches lays whole batches end to end: the stored bytes are the
// wire bytes, nothing is decoded per record.
func concatBatches(batches [][]byte, size int) []byte {
	if len(batches) == 1 {
		return batches[0]
	}
	out := make([]byte, 0, size)
	for _, b := range batches {
		out = append(out, b...)
	}
	return out
}
