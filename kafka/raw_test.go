package kafka

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testDeadline bounds every wait in these tests; it is a failure bound,
// never a way to let something happen.
const testDeadline = 20 * time.Second

// startServer serves cfg on an ephemeral port until the test ends. A nil
// Resolver gets an unopened one: the framing tests never reach it.
func startServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.Resolver == nil {
		cfg.Resolver = new(resolver.Resolver)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// rawConn speaks the wire format by hand, to test framing itself.
type rawConn struct {
	t  *testing.T
	nc net.Conn
}

func dialRaw(t *testing.T, addr net.Addr) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr.String(), testDeadline)
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(testDeadline))
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc}
}

// send writes req as one frame with a v1 or v2 request header.
func (c *rawConn) send(corrID int32, req kmsg.Request) {
	c.t.Helper()
	b := []byte{0, 0, 0, 0}
	b = kbin.AppendInt16(b, req.Key())
	b = kbin.AppendInt16(b, req.GetVersion())
	b = kbin.AppendInt32(b, corrID)
	b = kbin.AppendNullableString(b, nil)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	c.write(b)
}

func (c *rawConn) write(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// recv reads one response frame into resp (whose version must be set)
// and returns its correlation id.
func (c *rawConn) recv(resp kmsg.Response) int32 {
	c.t.Helper()
	body := c.recvFrame()
	corr := int32(binary.BigEndian.Uint32(body))
	body = body[4:]
	if resp.IsFlexible() && resp.Key() != apiKeyApiVersions {
		body = body[1:] // empty tagged fields
	}
	if err := resp.ReadFrom(body); err != nil {
		c.t.Fatalf("decode key %d: %v", resp.Key(), err)
	}
	return corr
}

func (c *rawConn) recvFrame() []byte {
	c.t.Helper()
	var size [4]byte
	if _, err := io.ReadFull(c.nc, size[:]); err != nil {
		c.t.Fatalf("read response: %v", err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c.nc, body); err != nil {
		c.t.Fatalf("read response: %v", err)
	}
	return body
}

// expectClosed waits for the server to close the connection.
func (c *rawConn) expectClosed() {
	c.t.Helper()
	buf := make([]byte, 64)
	for {
		_, err := c.nc.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.t.Fatal("connection still open after the deadline")
		}
		return
	}
}
