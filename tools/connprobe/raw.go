package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// raw times one connection: the dial, then ApiVersions, Metadata and
// FindCoordinator, each sent once the one before it is answered.
func raw(addr string) (samples, error) {
	start := time.Now()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	s := samples{"dial": {time.Since(start)}}
	for i, step := range []struct {
		name string
		req  kmsg.Request
	}{{"apiversions", apiVersions()}, {"metadata", metadata(nil)}, {"findcoordinator", findCoordinator()}} {
		at := time.Now()
		if _, err := roundTrip(c, int32(i), step.req); err != nil {
			return nil, fmt.Errorf("%s: %w", step.name, err)
		}
		s[step.name] = []time.Duration{time.Since(at)}
	}
	s["total"] = []time.Duration{time.Since(start)}
	return s, nil
}

// sizes prints the response sizes of the requests raw sends, Metadata
// for the group mode's topic.
func sizes(name, addr string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	t := topic
	for i, req := range []kmsg.Request{apiVersions(), metadata(&t), findCoordinator()} {
		b, err := roundTrip(c, int32(i), req)
		if err != nil {
			return err
		}
		fmt.Printf("%s %s v%d response %d bytes\n", name, kmsg.NameForKey(req.Key()), req.GetVersion(), len(b))
	}
	return nil
}

func apiVersions() kmsg.Request {
	r := kmsg.NewPtrApiVersionsRequest()
	r.Version = 4
	r.ClientSoftwareName, r.ClientSoftwareVersion = "connprobe", "1.0"
	return r
}

func metadata(topic *string) kmsg.Request {
	r := kmsg.NewPtrMetadataRequest()
	r.Version = 12
	r.Topics = []kmsg.MetadataRequestTopic{}
	if topic != nil {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = topic
		r.Topics = append(r.Topics, t)
	}
	return r
}

func findCoordinator() kmsg.Request {
	r := kmsg.NewPtrFindCoordinatorRequest()
	r.Version = 4
	r.CoordinatorKeys = []string{"connprobe"}
	return r
}

// roundTrip writes r as one frame and reads its response's body.
func roundTrip(c net.Conn, corr int32, r kmsg.Request) ([]byte, error) {
	b := []byte{0, 0, 0, 0}
	b = binary.BigEndian.AppendUint16(b, uint16(r.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(r.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, uint16(len("connprobe")))
	b = append(b, "connprobe"...)
	if r.IsFlexible() {
		b = append(b, 0) // no tagged header fields
	}
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	if _, err := c.Write(b); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err := io.ReadFull(c, body)
	return body, err
}
