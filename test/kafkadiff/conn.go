// Package kafkadiff holds kgateway's differential conformance tests: a
// corpus of raw Kafka request sequences sent to kgateway and to a real
// Apache Kafka broker (test/apachekafka), whose responses are normalised
// (placeholders for what is random or node-specific, unordered arrays
// keyed or sorted) and compared field by field. Every difference must be
// listed, with its reason, in accepted.txt; the list only shrinks, since an
// entry that matches nothing fails the test too.
//
// This file is the wire side: a raw connection that sends one kmsg request
// at the exact version a step names and decodes the answer at that
// version, with nothing in between (no client-side sharding, retries or
// version negotiation that would hide what a broker said).
package kafkadiff

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// IOTimeout bounds one request's write and its response's read: a failure
// bound, not a way to let something happen.
const IOTimeout = 20 * time.Second

// Conn is one raw connection to a broker.
type Conn struct {
	nc   net.Conn
	corr int32
	fmt  *kmsg.RequestFormatter
}

// Dial connects to addr.
func Dial(addr string) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, IOTimeout)
	if err != nil {
		return nil, err
	}
	return &Conn{nc: nc, fmt: kmsg.NewRequestFormatter(kmsg.FormatterClientID("kafkadiff"))}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// ErrClosed is what Do returns when the broker closed the connection
// instead of answering (the answer to a request it cannot parse).
var ErrClosed = errors.New("connection closed by the broker")

// Send writes req at its version and reads nothing (acks=0 produce).
func (c *Conn) Send(req kmsg.Request) error {
	c.corr++
	buf := c.fmt.AppendRequest(nil, req, c.corr)
	c.nc.SetWriteDeadline(time.Now().Add(IOTimeout))
	_, err := c.nc.Write(buf)
	return err
}

// SendRaw writes a request frame whose body (after the size) is frame, for
// requests kmsg cannot encode (bad input).
func (c *Conn) SendRaw(frame []byte) error {
	buf := binary.BigEndian.AppendUint32(nil, uint32(len(frame)))
	c.nc.SetWriteDeadline(time.Now().Add(IOTimeout))
	_, err := c.nc.Write(append(buf, frame...))
	return err
}

// Do writes req at its version (req.GetVersion()) and decodes the response
// at that version. An ApiVersions request a broker cannot serve is answered
// at version 0 (KIP-511); Do decodes that one at v0.
func (c *Conn) Do(req kmsg.Request) (kmsg.Response, error) {
	if err := c.Send(req); err != nil {
		return nil, err
	}
	body, err := c.readFrame()
	if err != nil {
		return nil, err
	}
	if len(body) < 4 {
		return nil, fmt.Errorf("short response: %d bytes", len(body))
	}
	if corr := int32(binary.BigEndian.Uint32(body)); corr != c.corr {
		return nil, fmt.Errorf("correlation id %d, want %d", corr, c.corr)
	}
	body = body[4:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if req.Key() == 18 && len(body) >= 2 && int16(binary.BigEndian.Uint16(body)) == 35 {
		resp.SetVersion(0) // UNSUPPORTED_VERSION: the v0 answer
	}
	if resp.IsFlexible() && req.Key() != 18 { // ApiVersions keeps header v0
		if body, err = skipTags(body); err != nil {
			return nil, err
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decode %s v%d: %w", kmsg.NameForKey(req.Key()), resp.GetVersion(), err)
	}
	return resp, nil
}

// readFrame reads one size-prefixed frame.
func (c *Conn) readFrame() ([]byte, error) {
	c.nc.SetReadDeadline(time.Now().Add(IOTimeout))
	var size [4]byte
	if _, err := io.ReadFull(c.nc, size[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err) {
			return nil, ErrClosed
		}
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 256<<20 {
		return nil, fmt.Errorf("response of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c.nc, body); err != nil {
		return nil, err
	}
	return body, nil
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

// skipTags drops a flexible response header's tagged fields.
func skipTags(b []byte) ([]byte, error) {
	n, l := binary.Uvarint(b)
	if l <= 0 {
		return nil, errors.New("bad header tag count")
	}
	b = b[l:]
	for i := uint64(0); i < n; i++ {
		if _, l = binary.Uvarint(b); l <= 0 {
			return nil, errors.New("bad header tag")
		}
		b = b[l:]
		size, l := binary.Uvarint(b)
		if l <= 0 || uint64(len(b)-l) < size {
			return nil, errors.New("bad header tag size")
		}
		b = b[l+int(size):]
	}
	return b, nil
}

// DialPlain connects to a SASL_PLAINTEXT listener at addr and logs in as
// user with the PLAIN mechanism (SaslHandshake v1, SaslAuthenticate v2).
func DialPlain(addr, user, password string) (*Conn, error) {
	c, err := Dial(addr)
	if err != nil {
		return nil, err
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "PLAIN"
	r, err := c.Do(hs)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("sasl handshake: %w", err)
	}
	if code := r.(*kmsg.SASLHandshakeResponse).ErrorCode; code != 0 {
		c.Close()
		return nil, fmt.Errorf("sasl handshake: error %d", code)
	}
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.SetVersion(2)
	au.SASLAuthBytes = []byte("\x00" + user + "\x00" + password)
	r, err = c.Do(au)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("sasl authenticate %s: %w", user, err)
	}
	if ar := r.(*kmsg.SASLAuthenticateResponse); ar.ErrorCode != 0 {
		c.Close()
		return nil, fmt.Errorf("sasl authenticate %s: error %d %v", user, ar.ErrorCode, ar.ErrorMessage)
	}
	return c, nil
}
