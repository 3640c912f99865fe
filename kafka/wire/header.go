package wire

// Request headers and response frames. A request body starts with its
// api key, version and correlation id, then the client id (nullable
// string) and, in a flexible (v2) header, tagged fields. A response frame
// is its size, the correlation id, the tagged fields of a flexible (v1)
// header, then the body.

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kbin"
)

// MinRequest is the smallest request body: api key, version,
// correlation id and the client id's length.
const MinRequest = 2 + 2 + 4 + 2

// RequestHeader is the fixed start of a request header.
type RequestHeader struct {
	Key, Version int16
	CorrID       int32
}

// ParseRequestHeader reads the fixed start of body, which holds at least
// MinRequest bytes (the frame size was checked).
func ParseRequestHeader(body []byte) RequestHeader {
	return RequestHeader{Key: int16(binary.BigEndian.Uint16(body[0:])), Version: int16(binary.BigEndian.Uint16(body[2:])),
		CorrID: int32(binary.BigEndian.Uint32(body[4:]))}
}

// ParseHeaderRest parses the request header after the correlation id
// (body[8:]): the client id, and the tagged fields of a flexible (v2)
// header. rest is the request's own body; err is kbin's.
func ParseHeaderRest(b []byte, flexible bool) (rest []byte, clientID *string, err error) {
	r := kbin.Reader{Src: b}
	clientID = r.NullableString()
	if flexible {
		for n := r.Uvarint(); n > 0 && r.Ok(); n-- {
			r.Uvarint() // tag
			r.Span(int(r.Uvarint()))
		}
	}
	if err := r.Complete(); err != nil {
		return nil, nil, err
	}
	return r.Src, clientID, nil
}

// Response is a response body as franz-go's kmsg encodes one.
type Response interface {
	SetVersion(int16)
	IsFlexible() bool
	AppendTo([]byte) []byte
}

// AppendResponse frames resp at version: size, correlation id, the tagged
// fields of a flexible (v1) header unless v0Header (ApiVersions, whose
// response header is always v0 so that a client can parse it before it
// knows the server's versions), then the body.
func AppendResponse(dst []byte, corrID int32, version int16, resp Response, v0Header bool) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(corrID))
	resp.SetVersion(version)
	if resp.IsFlexible() && !v0Header {
		dst = append(dst, 0)
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// AppendRaw frames b bare: its size, then b (a SASL token after
// SaslHandshake v0).
func AppendRaw(dst, b []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}
