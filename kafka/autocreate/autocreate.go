// Package autocreate runs the topic auto-creations Metadata requests
// start, asynchronously, as Kafka's AutoTopicCreationManager does: the
// request that finds a topic missing starts its creation and is answered
// at once without it (UNKNOWN_TOPIC_OR_PARTITION); requests while the
// creation is in flight are answered the same and start nothing; the
// topic is there for requests after the creation ends.
//
// Invariant: at most one creation per topic name is in flight; a name
// leaves the in-flight set only when its creation has returned (created,
// or failed: a failure is logged, as Kafka's controller's answer to its
// broker is, and the next request tries again).
package autocreate

import (
	"sync"

	"go.uber.org/zap"
)

// Creator starts creations with create, each on a goroutine of its own
// counted by wg (a server's shutdown waits for them).
type Creator struct {
	create func(name string) error
	log    *zap.Logger
	wg     *sync.WaitGroup

	mu       sync.Mutex
	inflight map[string]struct{}
}

// New is a Creator whose creations call create and are counted by wg.
func New(create func(name string) error, wg *sync.WaitGroup, log *zap.Logger) *Creator {
	return &Creator{create: create, log: log, wg: wg, inflight: map[string]struct{}{}}
}

// Start starts creating name unless a creation of it is in flight, and
// reports whether it started one.
func (c *Creator) Start(name string) bool { return c.StartWith(name, c.create) }

// StartWith is Start creating name with create instead of the Creator's
// own function (a creation on behalf of the requesting principal).
func (c *Creator) StartWith(name string, create func(name string) error) bool {
	c.mu.Lock()
	if _, busy := c.inflight[name]; busy {
		c.mu.Unlock()
		return false
	}
	c.inflight[name] = struct{}{}
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		err := create(name)
		c.mu.Lock()
		delete(c.inflight, name)
		c.mu.Unlock()
		if err != nil {
			c.log.Warn("auto-create-failed", zap.String("topic", name), zap.Error(err))
		}
	}()
	return true
}

// InFlight reports whether a creation of name is in flight.
func (c *Creator) InFlight(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, busy := c.inflight[name]
	return busy
}
