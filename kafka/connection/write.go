package connection

import (
	"net"
	"sync"
	"time"

	"github.com/kgateway/kgateway/kafka/sendfile"
	"github.com/kgateway/kgateway/kafka/wire"
	"go.uber.org/zap"
)

// responses is a connection's response order: its slots in request
// order, each written once it is answered and every slot before it is
// written (responses in request order).
//
// Whoever answers a slot (its handler's goroutine, once done is closed)
// takes the write turn if nobody holds it and writes the answered slots
// at the head, its own among them when every slot before it is written.
// A fetch answerable at once is thus written by the goroutine that built
// it, without waking another goroutine for it; the writer goroutine
// writes only the slots the reader answers itself, and ends the
// connection.
//
// Invariants:
//
//   - At most one goroutine holds the write turn (writing); only it
//     calls Handler.Encode, Written and Free, and uses buf, so they need
//     no lock of their own (the turn passes under mu).
//   - An answered slot at the head is never left unwritten: its answerer
//     flushes after answering, and the holder of the turn looks at the
//     head again before giving the turn up (under mu), so an answer
//     that came while the turn was held is seen by the holder.
//   - Once broken (a failed write, a handler's Go error), slots are freed
//     unwritten, each once it is answered: a handler is done before its
//     slot is freed.
type responses struct {
	mu struct {
		sync.Mutex
		pending []*Slot // queued and not yet written, in request order
		writing bool    // a goroutine holds the write turn
		broken  bool    // the connection is done: free, do not write
		readEnd bool    // the reader has ended: nothing more is queued
	}
	// buf is the response frame buffer, reused; the turn's holder only.
	buf []byte
}

// queue puts sl in the response order once the in-flight window has
// room; false if the connection died first. Then r (nil: sl is answered
// already) is started on a worker, so that its bytes return to the
// budget and its successor gets its turn.
func (c *Conn) queue(sl *Slot, r *Request) bool {
	select {
	case c.window <- struct{}{}:
	case <-c.ctx.Done():
		if r != nil {
			c.opt.Goroutines.Add(1)
			c.workers().Go(r.Run)
		}
		c.finish(sl)
		return false
	}
	c.out.mu.Lock()
	c.out.mu.pending = append(c.out.mu.pending, sl)
	c.out.mu.Unlock()
	return true
}

// answered completes sl (its handler has ended) and writes what is ready
// to be written.
func (c *Conn) answered(sl *Slot) {
	close(sl.done)
	c.flush()
}

// readDone marks the end of the reader: once every queued slot is
// written or freed, the writer goroutine ends the connection.
func (c *Conn) readDone() {
	c.out.mu.Lock()
	c.out.mu.readEnd = true
	c.out.mu.Unlock()
	c.wakeWriter()
}

func (c *Conn) wakeWriter() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// flush takes the write turn, unless another goroutine holds it, and
// writes (or, once broken, frees) the answered slots at the head.
func (c *Conn) flush() {
	c.out.mu.Lock()
	if c.out.mu.writing {
		c.out.mu.Unlock()
		return
	}
	c.out.mu.writing = true
	for {
		sl := c.answeredHeadLocked()
		if sl == nil {
			break
		}
		broken := c.out.mu.broken
		c.out.mu.Unlock()
		if !broken && !c.writeSlot(sl) {
			c.Kill()
			broken = true
		}
		c.h.Free(sl)
		c.finish(sl)
		<-c.window
		if cap(c.out.buf) > 1<<20 {
			c.out.buf = nil // do not pin a large response's buffer
		}
		c.out.mu.Lock()
		c.out.mu.broken = c.out.mu.broken || broken
	}
	c.out.mu.writing = false
	end := c.out.mu.readEnd && len(c.out.mu.pending) == 0
	c.out.mu.Unlock()
	if end {
		c.wakeWriter()
	}
}

// answeredHeadLocked takes the head slot out of the order if it is
// answered; nil if there is none or it is not.
func (c *Conn) answeredHeadLocked() *Slot {
	p := c.out.mu.pending
	if len(p) == 0 {
		return nil
	}
	select {
	case <-p[0].done:
	default:
		return nil
	}
	sl := p[0]
	p[0] = nil
	c.out.mu.pending = p[1:]
	if len(c.out.mu.pending) == 0 {
		c.out.mu.pending = p[:0] // reuse the array
	}
	return sl
}

// writeLoop is the writer goroutine: it writes the slots the reader
// answers itself, and once the reader has ended and every queued slot is
// written or freed, closes the connection.
func (c *Conn) writeLoop() {
	defer c.opt.Goroutines.Done()
	defer func() {
		if c.set != nil {
			c.set.remove(c)
		}
	}()
	for range c.wake {
		c.flush()
		if c.drained() {
			break
		}
	}
	c.Kill()
}

// drained: the reader has ended and no slot is left to write or free.
func (c *Conn) drained() bool {
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	return c.out.mu.readEnd && len(c.out.mu.pending) == 0 && !c.out.mu.writing
}

// writeSlot writes one answered slot's response; false means the
// connection is done (dead, or a handler error closes it: a Go error
// closes the connection).
func (c *Conn) writeSlot(sl *Slot) bool {
	if sl.Err != nil {
		c.log.Info("request-failed", zap.Int16("api-key", sl.Key),
			zap.Int16("api-version", sl.Version), zap.Error(sl.Err))
		return false
	}
	if sl.Throttle > 0 && !sl.SelfThrottle && !wire.Delay(sl.Throttle, c.ctx.Done()) {
		return false
	}
	if sl.Resp == nil {
		c.muted.For(sl.Throttle) // No response for acks=0; acks=0 is muted as Kafka does
		return true
	}
	frame, pieces, n, ok := c.h.Encode(c.out.buf[:0], sl)
	if !ok {
		return false
	}
	c.out.buf = frame
	// The idle connection timeout: a client that reads nothing for
	// connections.max.idle.ms is gone.
	c.nc.SetWriteDeadline(time.Now().Add(c.opt.Idle))
	var err error
	if pieces != nil {
		// Fetch: record batches by reference, from their files with
		// sendfile where the connection allows (kafka/fetchwire).
		_, err = sendfile.Write(c.nc, pieces, c.Sendfile())
	} else {
		out := net.Buffers{frame}
		_, err = out.WriteTo(c.nc)
	}
	if err != nil {
		c.log.Debug("connection-write-failed", zap.Error(err))
		return false
	}
	c.h.Written(sl, n)
	c.touch()
	if pieces == nil && sl.Throttle > 0 && sl.SelfThrottle {
		c.muted.For(sl.Throttle) // KIP-219: respond first, then mute
	}
	return !sl.CloseAfter
}

// finish counts a slot out of the connection's in-flight requests (the
// idle connection timeout). Its budget bytes were
// returned when its handler released them (the request memory budget).
func (c *Conn) finish(*Slot) {
	c.inFlight.Add(-1)
}
