package featuregate

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// codes is every error code an answer carries, top-level and per group.
func codes(resp kmsg.Response) []int16 {
	switch r := resp.(type) {
	case *kmsg.ConsumerGroupDescribeResponse:
		return []int16{r.Groups[0].ErrorCode, r.Groups[1].ErrorCode}
	case *kmsg.ShareGroupDescribeResponse:
		return []int16{r.Groups[0].ErrorCode, r.Groups[1].ErrorCode}
	case *kmsg.StreamsGroupDescribeResponse:
		return []int16{r.Groups[0].ErrorCode, r.Groups[1].ErrorCode}
	case *kmsg.DescribeShareGroupOffsetsResponse:
		return []int16{r.Groups[0].ErrorCode, r.Groups[1].ErrorCode}
	case *kmsg.ConsumerGroupHeartbeatResponse:
		return []int16{r.ErrorCode}
	case *kmsg.ShareGroupHeartbeatResponse:
		return []int16{r.ErrorCode}
	case *kmsg.StreamsGroupHeartbeatResponse:
		return []int16{r.ErrorCode}
	case *kmsg.ShareFetchResponse:
		return []int16{r.ErrorCode}
	case *kmsg.ShareAcknowledgeResponse:
		return []int16{r.ErrorCode}
	case *kmsg.AlterShareGroupOffsetsResponse:
		return []int16{r.ErrorCode}
	case *kmsg.DeleteShareGroupOffsetsResponse:
		return []int16{r.ErrorCode}
	}
	return nil
}

// Each gated key is UNSUPPORTED_VERSION (per named group for the
// describes) while its feature is at 0 and served at 1; other keys are
// never gated.
func TestRefuse(t *testing.T) {
	cgd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cgd.Groups = []string{"a", "b"}
	sgd := kmsg.NewPtrShareGroupDescribeRequest()
	sgd.GroupIDs = []string{"a", "b"}
	stgd := kmsg.NewPtrStreamsGroupDescribeRequest()
	stgd.Groups = []string{"a", "b"}
	dso := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	dso.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: "a"}, {GroupID: "b"}}
	gated := map[string][]kmsg.Request{
		GroupVersion: {kmsg.NewPtrConsumerGroupHeartbeatRequest(), cgd},
		ShareVersion: {kmsg.NewPtrShareGroupHeartbeatRequest(), sgd, kmsg.NewPtrShareFetchRequest(), kmsg.NewPtrShareAcknowledgeRequest(),
			dso, kmsg.NewPtrAlterShareGroupOffsetsRequest(), kmsg.NewPtrDeleteShareGroupOffsetsRequest()},
		StreamsVersion: {kmsg.NewPtrStreamsGroupHeartbeatRequest(), stgd},
	}
	for feature, reqs := range gated {
		off := func(f string) int16 {
			if f == feature {
				return 0
			}
			return 1
		}
		for _, req := range reqs {
			resp := Refuse(req, off)
			if resp == nil {
				t.Errorf("%s served with %s at 0", kmsg.NameForKey(req.Key()), feature)
				continue
			}
			for _, code := range codes(resp) {
				if code != kerr.UnsupportedVersion.Code {
					t.Errorf("%s with %s at 0: code %d", kmsg.NameForKey(req.Key()), feature, code)
				}
			}
			if len(codes(resp)) == 0 {
				t.Errorf("%s: no error in %T", kmsg.NameForKey(req.Key()), resp)
			}
			if Refuse(req, func(string) int16 { return 1 }) != nil {
				t.Errorf("%s refused with %s at 1", kmsg.NameForKey(req.Key()), feature)
			}
		}
	}
	if Refuse(kmsg.NewPtrListGroupsRequest(), func(string) int16 { return 0 }) != nil {
		t.Error("ListGroups refused")
	}
}
