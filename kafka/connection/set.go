package connection

// The connection limit: at most max.connections connections are open, and
// at most max.connections.per.ip (or its override) from one address; a
// connection beyond either is closed as soon as it is accepted, and one
// over its address's connection_creation_rate (KIP-612) is held open,
// unread, for the throttle time and then closed, as Kafka does, so that a
// client reconnecting in a loop is slowed down. Running out of file
// descriptors pauses accepting (with backoff); it never stops serving.

import (
	"net"
	"sync"
	"time"

	"github.com/kgateway/kgateway/kafka/wire"
	"go.uber.org/zap"
)

// Limits bound a Set's connections.
type Limits struct {
	// Max is max.connections.
	Max int
	// PerIP says whether one more connection from ip, which has open
	// already, is refused, and the bound that refuses it
	// (max.connections.per.ip and its overrides).
	PerIP func(ip string, open int) (limit int, refused bool)
	// Throttle is how long a new connection from ip is held before it is
	// closed (connection_creation_rate); 0: it is served.
	Throttle func(ip string) time.Duration
	Log      *zap.Logger
}

// Set is a server's open connections, counted in total and by client
// address, under the connection limit.
type Set struct {
	lim Limits
	mu  sync.Mutex
	// closed: no connection is added any more (shutdown).
	closed bool
	open   map[*Conn]string // each connection's client address
	perIP  map[string]int
}

// NewSet is an empty set under lim.
func NewSet(lim Limits) *Set {
	return &Set{lim: lim, open: make(map[*Conn]string), perIP: make(map[string]int)}
}

// Add admits nc under the limits and starts the connection newConn makes
// of it (given its client address), or closes nc (now, or after its
// throttle). It is false once the set is closed; nc is then the caller's.
func (s *Set) Add(nc net.Conn, newConn func(ip string) *Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if len(s.open) >= s.lim.Max {
		s.lim.Log.Debug("connection-refused-max-connections", zap.Stringer("remote", nc.RemoteAddr()),
			zap.Int("max-connections", s.lim.Max))
		nc.Close()
		return true
	}
	ip := wire.HostOf(nc.RemoteAddr())
	if limit, refused := s.lim.PerIP(ip, s.perIP[ip]); refused {
		s.lim.Log.Debug("connection-refused-max-connections-per-ip", zap.String("ip", ip), zap.Int("limit", limit))
		nc.Close()
		return true
	}
	if d := s.lim.Throttle(ip); d > 0 {
		s.lim.Log.Debug("connection-throttled", zap.String("ip", ip), zap.Int64("throttle-ms", d.Milliseconds()))
		time.AfterFunc(d, func() { nc.Close() })
		return true
	}
	s.perIP[ip]++
	c := newConn(ip)
	c.set = s
	s.open[c] = ip
	c.Start()
	return true
}

// remove counts a connection out, once its writer has ended.
func (s *Set) remove(c *Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ip, ok := s.open[c]
	if !ok {
		return
	}
	delete(s.open, c)
	if s.perIP[ip]--; s.perIP[ip] <= 0 {
		delete(s.perIP, ip)
	}
}

// Len is the number of open connections.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

// OpenFrom is the number of open connections from ip.
func (s *Set) OpenFrom(ip string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perIP[ip]
}

// Handlers are the open connections' handlers.
func (s *Set) Handlers() []Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Handler, 0, len(s.open))
	for c := range s.open {
		out = append(out, c.h)
	}
	return out
}

// Close adds no connection any more and makes every open one stop
// reading (graceful shutdown): their writers still write every queued
// response.
func (s *Set) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.open {
		c.StopReading()
	}
}

// Kill closes every open connection at once.
func (s *Set) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.open {
		c.Kill()
	}
}

// Accept accepts connections on ln and hands each to add until ln fails
// or closing is closed: an accept error that may pass (out of file
// descriptors) pauses accepting with backoff and never stops serving. It
// returns nil once closing, or when add is false (nc is then closed),
// else ln's error.
func Accept(ln net.Listener, closing <-chan struct{}, log *zap.Logger, add func(net.Conn) bool) error {
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			select {
			case <-closing:
				return nil
			default:
			}
			if wire.RetryableAccept(err) { // The connection limit
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				log.Warn("accept-retry", zap.Error(err), zap.Duration("backoff", backoff))
				select {
				case <-time.After(backoff):
				case <-closing:
				}
				continue
			}
			log.Error("accept-failed", zap.Error(err))
			return err
		}
		backoff = 0
		if !add(nc) {
			nc.Close()
			return nil
		}
	}
}
