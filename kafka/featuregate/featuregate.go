package featuregate

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The features that gate a group protocol.
const (
	GroupVersion   = "group.version"
	ShareVersion   = "share.version"
	StreamsVersion = "streams.version"
)

// gates maps an API key to the feature that turns it off at level 0.
var gates = map[int16]string{
	68: GroupVersion, 69: GroupVersion,
	76: ShareVersion, 77: ShareVersion, 78: ShareVersion, 79: ShareVersion,
	90: ShareVersion, 91: ShareVersion, 92: ShareVersion,
	88: StreamsVersion, 89: StreamsVersion, 93: StreamsVersion,
}

// Refuse is req's answer when the feature gating its key is off (level
// says a feature's finalized level), nil when req is to be served.
func Refuse(req kmsg.Request, level func(feature string) int16) kmsg.Response {
	f, gated := gates[req.Key()]
	if !gated || level(f) > 0 {
		return nil
	}
	return unsupported(req)
}

// unsupported is req's UNSUPPORTED_VERSION answer, the error where
// Kafka's getErrorResponse puts it.
func unsupported(req kmsg.Request) kmsg.Response {
	code := kerr.UnsupportedVersion.Code
	resp := req.ResponseKind()
	switch r := req.(type) {
	case *kmsg.ConsumerGroupDescribeRequest:
		out := resp.(*kmsg.ConsumerGroupDescribeResponse)
		for _, g := range r.Groups {
			dg := kmsg.NewConsumerGroupDescribeResponseGroup()
			dg.Group, dg.ErrorCode = g, code
			out.Groups = append(out.Groups, dg)
		}
	case *kmsg.ShareGroupDescribeRequest:
		out := resp.(*kmsg.ShareGroupDescribeResponse)
		for _, g := range r.GroupIDs {
			dg := kmsg.NewShareGroupDescribeResponseGroup()
			dg.GroupID, dg.ErrorCode = g, code
			out.Groups = append(out.Groups, dg)
		}
	case *kmsg.StreamsGroupDescribeRequest:
		out := resp.(*kmsg.StreamsGroupDescribeResponse)
		for _, g := range r.Groups {
			dg := kmsg.NewStreamsGroupDescribeResponseGroup()
			dg.Group, dg.ErrorCode = g, code
			out.Groups = append(out.Groups, dg)
		}
	case *kmsg.DescribeShareGroupOffsetsRequest:
		out := resp.(*kmsg.DescribeShareGroupOffsetsResponse)
		for _, g := range r.Groups {
			dg := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
			dg.GroupID, dg.ErrorCode = g.GroupID, code
			out.Groups = append(out.Groups, dg)
		}
	case *kmsg.ConsumerGroupHeartbeatRequest:
		resp.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode = code
	case *kmsg.ShareGroupHeartbeatRequest:
		resp.(*kmsg.ShareGroupHeartbeatResponse).ErrorCode = code
	case *kmsg.StreamsGroupHeartbeatRequest:
		resp.(*kmsg.StreamsGroupHeartbeatResponse).ErrorCode = code
	case *kmsg.StreamsGroupTopologyDescriptionUpdateRequest:
		resp.(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse).ErrorCode = code
	case *kmsg.ShareFetchRequest:
		resp.(*kmsg.ShareFetchResponse).ErrorCode = code
	case *kmsg.ShareAcknowledgeRequest:
		resp.(*kmsg.ShareAcknowledgeResponse).ErrorCode = code
	case *kmsg.AlterShareGroupOffsetsRequest:
		resp.(*kmsg.AlterShareGroupOffsetsResponse).ErrorCode = code
	case *kmsg.DeleteShareGroupOffsetsRequest:
		resp.(*kmsg.DeleteShareGroupOffsetsResponse).ErrorCode = code
	}
	return resp
}
