package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// events records when one member first wrote each request and first
// read each response, since start.
type events struct {
	start time.Time
	mu    struct {
		sync.Mutex
		at map[string]time.Duration
	}
}

func (e *events) mark(what string, node int32, key int16) {
	n := fmt.Sprint(node)
	if node < 0 {
		n = "S" // a seed connection
	}
	k := fmt.Sprintf("%s%s.%d", what, n, key)
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.mu.at[k]; !ok {
		e.mu.at[k] = time.Since(e.start)
	}
}

func (e *events) OnBrokerWrite(m kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	e.mark("w", m.NodeID, key)
}

func (e *events) OnBrokerRead(m kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	e.mark("r", m.NodeID, key)
}

// gaps are the intervals printed besides the events: round trips (a
// write to its read) and the client's own time (a read to the next
// write).
var gaps = [][2]string{
	{"wS.18", "rS.18"}, {"rS.18", "wS.3"}, {"wS.3", "rS.3"}, {"rS.3", "w0.18"},
	{"w0.18", "r0.18"}, {"r0.18", "w0.10"}, {"w0.10", "r0.10"}, {"r0.10", "w0.11"}, {"w0.11", "r0.11"},
}

var groups int

// group starts members consumer-group members of a new group back to
// back and waits until each has its first SyncGroup answer (or 10 s).
func group(addr string, members int) (samples, error) {
	groups++
	name := fmt.Sprintf("connprobe-%d-%d", time.Now().UnixNano(), groups)
	start := time.Now()
	evs := make([]*events, members)
	cls := make([]*kgo.Client, 0, members)
	defer closeAll(&cls)
	for i := range evs {
		evs[i] = &events{start: start}
		evs[i].mu.at = map[string]time.Duration{}
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(name), kgo.ConsumeTopics(topic),
			kgo.DisableAutoCommit(), kgo.WithHooks(evs[i]))
		if err != nil {
			return nil, err
		}
		cls = append(cls, cl)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !synced(evs); {
		time.Sleep(5 * time.Millisecond)
	}
	s := samples{}
	for _, e := range evs {
		e.mu.Lock()
		for k, v := range e.mu.at {
			s[k] = append(s[k], v)
		}
		for _, g := range gaps {
			a, ok1 := e.mu.at[g[0]]
			b, ok2 := e.mu.at[g[1]]
			if ok1 && ok2 {
				s[g[0]+">"+g[1]] = append(s[g[0]+">"+g[1]], b-a)
			}
		}
		e.mu.Unlock()
	}
	return s, nil
}

// synced reports whether every member has read a SyncGroup answer.
func synced(evs []*events) bool {
	for _, e := range evs {
		e.mu.Lock()
		_, ok := e.mu.at["r0.14"]
		e.mu.Unlock()
		if !ok {
			return false
		}
	}
	return true
}

// closeAll closes the clients at once (each leaves its group).
func closeAll(cls *[]*kgo.Client) {
	var wg sync.WaitGroup
	for _, cl := range *cls {
		wg.Go(cl.Close)
	}
	wg.Wait()
}

// ensureTopic makes topic with 100 partitions unless it exists, and
// waits until all have leaders.
func ensureTopic(addr string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 100, 1, nil, topic); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return err
	}
	for ctx.Err() == nil {
		td, err := adm.ListTopics(ctx, topic)
		if err == nil && td[topic].Err == nil && len(td[topic].Partitions) == 100 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return ctx.Err()
}
