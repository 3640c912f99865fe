package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterConfigs and IncrementalAlterConfigs of a missing topic validate
// the changes first, as a real Kafka 4.4 broker does: an unknown name or
// a bad value is INVALID_CONFIG, valid changes UNKNOWN_TOPIC_OR_PARTITION.
func TestAlterConfigsMissingTopic(t *testing.T) {
	g := newSessionRig(t, Config{}, nil)
	for _, tc := range []struct {
		name, value string
		want        int16
	}{
		{"retention.ms", "86400000", kerr.UnknownTopicOrPartition.Code},
		{"retention.ms", "abc", kerr.InvalidConfig.Code},
		{"no.such.config", "1", kerr.InvalidConfig.Code},
	} {
		a := kmsg.NewPtrAlterConfigsRequest()
		ar := kmsg.NewAlterConfigsRequestResource()
		ar.ResourceType, ar.ResourceName = kmsg.ConfigResourceTypeTopic, "missing"
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = tc.name, kmsg.StringPtr(tc.value)
		ar.Configs = append(ar.Configs, c)
		a.Resources = append(a.Resources, ar)
		if got := ask(g.c, a).(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode; got != tc.want {
			t.Errorf("AlterConfigs %s=%s: code %d, want %d", tc.name, tc.value, got, tc.want)
		}
		ia := kmsg.NewPtrIncrementalAlterConfigsRequest()
		iar := kmsg.NewIncrementalAlterConfigsRequestResource()
		iar.ResourceType, iar.ResourceName = kmsg.ConfigResourceTypeTopic, "missing"
		ic := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		ic.Name, ic.Value = tc.name, kmsg.StringPtr(tc.value)
		iar.Configs = append(iar.Configs, ic)
		ia.Resources = append(ia.Resources, iar)
		if got := ask(g.c, ia).(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode; got != tc.want {
			t.Errorf("IncrementalAlterConfigs %s=%s: code %d, want %d", tc.name, tc.value, got, tc.want)
		}
	}
}
