package kafka

import (
	"path/filepath"
	"testing"

	"github.com/kgateway/kgateway/kafka/featuregate"
	"github.com/kgateway/kgateway/kafka/features"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupProtocolCodes asks each gated API once and returns the error code
// each answers, by key: the top-level one, or the first group's.
func groupProtocolCodes(g *sessionRig) map[int16]int16 {
	g.t.Helper()
	const member = "abcdefghijklmnopqrstuv"
	cgh := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	cgh.Group, cgh.MemberID, cgh.RebalanceTimeoutMillis = "fg-c", member, 30000
	cgh.SubscribedTopicNames = []string{"a"}
	cgd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cgd.Groups = []string{"fg-c", "fg-c2"}
	shb := kmsg.NewPtrShareGroupHeartbeatRequest()
	shb.SetVersion(1)
	shb.GroupID, shb.MemberID, shb.SubscribedTopicNames = "fg-s", member, []string{"a"}
	sgd := kmsg.NewPtrShareGroupDescribeRequest()
	sgd.SetVersion(1)
	sgd.GroupIDs = []string{"fg-s", "fg-s2"}
	dso := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	dso.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: "fg-s"}}
	aso := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	aso.GroupID = "fg-s"
	aso.Topics = []kmsg.AlterShareGroupOffsetsRequestTopic{{Topic: "a", Partitions: []kmsg.AlterShareGroupOffsetsRequestTopicPartition{{Partition: 0}}}}
	out := map[int16]int16{
		68: ask(g.c, cgh).(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode,
		76: ask(g.c, shb).(*kmsg.ShareGroupHeartbeatResponse).ErrorCode,
		91: ask(g.c, aso).(*kmsg.AlterShareGroupOffsetsResponse).ErrorCode,
	}
	if r := ask(g.c, cgd).(*kmsg.ConsumerGroupDescribeResponse); len(r.Groups) == 2 {
		out[69] = r.Groups[1].ErrorCode
	}
	if r := ask(g.c, sgd).(*kmsg.ShareGroupDescribeResponse); len(r.Groups) == 2 {
		out[77] = r.Groups[1].ErrorCode
	}
	if r := ask(g.c, dso).(*kmsg.DescribeShareGroupOffsetsResponse); len(r.Groups) == 1 {
		out[90] = r.Groups[0].ErrorCode
	}
	return out
}

// group.version and share.version at 0 (UpdateFeatures) turn the
// consumer group protocol (KIP-848) and share groups (KIP-932) off, as
// in Kafka 4.4: their APIs answer UNSUPPORTED_VERSION, the error per
// group for the describes, while ApiVersions still lists the keys and
// no longer finalizes the features. The levels persist, and finalizing
// the features again serves the protocols.
func TestGroupProtocolsOff(t *testing.T) {
	g, dir := adminRig(t)
	unsupported := kerr.UnsupportedVersion.Code
	for key, code := range groupProtocolCodes(g) {
		if code == unsupported {
			t.Fatalf("key %d UNSUPPORTED_VERSION with the features on", key)
		}
	}
	off := updateReq(1, false, fu(featuregate.GroupVersion, 0, 2), fu(shareVersionFeature, 0, 2))
	if resp := ask(g.c, off).(*kmsg.UpdateFeaturesResponse); resp.ErrorCode != 0 {
		t.Fatalf("turning off: %d %s", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	codes := groupProtocolCodes(g)
	for _, key := range []int16{68, 69, 76, 77, 90, 91} {
		if codes[key] != unsupported {
			t.Errorf("key %d answered %d with its feature at 0, want UNSUPPORTED_VERSION", key, codes[key])
		}
	}
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(4)
	av.ClientSoftwareName, av.ClientSoftwareVersion = "t", "1"
	resp := ask(g.c, av).(*kmsg.ApiVersionsResponse)
	for _, f := range resp.FinalizedFeatures {
		if f.Name == featuregate.GroupVersion || f.Name == shareVersionFeature {
			t.Errorf("%s still finalized at %d", f.Name, f.MaxVersionLevel)
		}
	}
	listed := map[int16]bool{}
	for _, k := range resp.ApiKeys {
		listed[k.ApiKey] = true
	}
	if !listed[68] || !listed[76] || !listed[90] {
		t.Errorf("a gated key left ApiVersions: %v", listed)
	}
	reopened, err := features.Open(filepath.Join(dir, "features.json"), featureSpecs)
	if err != nil || reopened.Level(featuregate.GroupVersion) != 0 || reopened.Level(shareVersionFeature) != 0 {
		t.Fatalf("reopened: %v, group.version %d share.version %d", err, reopened.Level(featuregate.GroupVersion), reopened.Level(shareVersionFeature))
	}
	on := updateReq(1, false, fu(featuregate.GroupVersion, 1, 1), fu(shareVersionFeature, 1, 1))
	if resp := ask(g.c, on).(*kmsg.UpdateFeaturesResponse); resp.ErrorCode != 0 {
		t.Fatalf("turning on: %d", resp.ErrorCode)
	}
	for key, code := range groupProtocolCodes(g) {
		if code == unsupported {
			t.Errorf("key %d UNSUPPORTED_VERSION after the features are finalized again", key)
		}
	}
}
