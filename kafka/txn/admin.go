package txn

import (
	"regexp"
	"slices"
	"sort"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// stateByName maps Kafka's state names (DescribeTransactions,
// ListTransactions) to states.
var stateByName = func() map[string]offsets.TxnState {
	m := map[string]offsets.TxnState{}
	for s := offsets.TxnEmpty; s <= offsets.TxnPrepareEpochFence; s++ {
		m[s.String()] = s
	}
	return m
}()

// startMillis is Kafka's txnStartTimestamp: -1 when no transaction ran
// since the last epoch bump.
func startMillis(st offsets.Txn) int64 {
	if st.StartTime.IsZero() {
		return -1
	}
	return st.StartTime.UnixMilli()
}

// DescribeTransactions handles DescribeTransactions v0: an unknown id is
// TRANSACTIONAL_ID_NOT_FOUND, its producer id, epoch, timeout and start
// time 0 and its state "", as Kafka answers it.
func (c *Coordinator) DescribeTransactions(req *kmsg.DescribeTransactionsRequest) *kmsg.DescribeTransactionsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		d := kmsg.NewDescribeTransactionsResponseTransactionState()
		d.TransactionalID = id
		t := c.lookup(id)
		if t == nil {
			d.ErrorCode = errTxnIDNotFound // the rest the schema's zeros, as Kafka leaves them
			resp.TransactionStates = append(resp.TransactionStates, d)
			continue
		}
		st := t.st
		t.mu.Unlock()
		d.State, d.TimeoutMillis = st.State.String(), int32(st.Timeout.Milliseconds())
		d.StartTimestamp, d.ProducerID, d.ProducerEpoch = startMillis(st), st.ProducerID, st.Epoch
		tps := slices.Clone(st.Partitions)
		sort.Slice(tps, func(i, j int) bool {
			if tps[i].Topic != tps[j].Topic {
				return tps[i].Topic < tps[j].Topic
			}
			return tps[i].Partition < tps[j].Partition
		})
		for _, tp := range tps {
			if n := len(d.Topics); n == 0 || d.Topics[n-1].Topic != tp.Topic {
				dt := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
				dt.Topic = tp.Topic
				d.Topics = append(d.Topics, dt)
			}
			last := &d.Topics[len(d.Topics)-1]
			last.Partitions = append(last.Partitions, tp.Partition)
		}
		resp.TransactionStates = append(resp.TransactionStates, d)
	}
	return resp
}

// ListTransactions handles ListTransactions v0–1: the state and producer
// id filters (KIP-664) and v1's duration filter (transactions running
// longer than it), as Kafka's listTransactionStates applies them; unknown
// state names are reported back and match nothing.
func (c *Coordinator) ListTransactions(req *kmsg.ListTransactionsRequest) *kmsg.ListTransactionsResponse {
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	var states []offsets.TxnState
	for _, name := range req.StateFilters {
		if s, ok := stateByName[name]; ok {
			states = append(states, s)
		} else {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
		}
	}
	pids := make(map[int64]bool, len(req.ProducerIDFilters))
	for _, pid := range req.ProducerIDFilters {
		pids[pid] = true
	}
	duration := int64(-1)
	if req.Version >= 1 {
		duration = req.DurationFilterMillis
	}
	var idPattern *regexp.Regexp
	if req.Version >= 2 && req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		// KIP-1152: an RE2 expression the whole id must match, as
		// Kafka's re2j Matcher.matches.
		re, err := regexp.Compile(`^(?:` + *req.TransactionalIDPattern + `)$`)
		if err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			return resp
		}
		idPattern = re
	}
	now := c.clock.Now().UnixMilli()
	for _, t := range c.snapshot() {
		t.mu.Lock()
		st, dead := t.st, t.dead
		t.mu.Unlock()
		switch {
		case dead || st.State == offsets.TxnDead:
		case len(pids) > 0 && !pids[st.ProducerID]:
		case len(req.StateFilters) > 0 && !slices.Contains(states, st.State):
		case duration >= 0 && now-startMillis(st) <= duration:
		case idPattern != nil && !idPattern.MatchString(st.ID):
		default:
			ls := kmsg.NewListTransactionsResponseTransactionState()
			ls.TransactionalID, ls.ProducerID, ls.TransactionState = st.ID, st.ProducerID, st.State.String()
			resp.TransactionStates = append(resp.TransactionStates, ls)
		}
	}
	return resp
}
