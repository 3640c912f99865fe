package apiversions

import (
	"path/filepath"
	"testing"

	"github.com/kgateway/kgateway/kafka/features"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func node(t *testing.T) Node {
	levels, err := features.Open(filepath.Join(t.TempDir(), "features"), []features.Spec{
		{Name: "share.version", Min: 1, Max: 1, Default: 1},
		{Name: "transaction.version", Min: 0, Max: 2, Default: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	keys := []kmsg.ApiVersionsResponseApiKey{{ApiKey: 0, MaxVersion: 13}, {ApiKey: 18, MaxVersion: 5}}
	return Node{ClusterID: "c", NodeID: 1, Keys: keys, Levels: levels,
		Hidden: func(f string) bool { return f == "share.version" }}
}

func request(software string, cluster *string, nodeID int32) *kmsg.ApiVersionsRequest {
	r := kmsg.NewPtrApiVersionsRequest()
	r.ClientSoftwareName, r.ClientSoftwareVersion = software, "1.0"
	r.ClusterID, r.NodeID = cluster, nodeID
	return r
}

// TestAnswer checks the refusals (KIP-511 software, KIP-1242 both or
// neither and misrouting) and a v3+ answer: the keys, the features but
// the hidden ones, a supported minimum of 0 shown as 1 before v4.
func TestAnswer(t *testing.T) {
	n := node(t)
	for _, c := range []struct {
		name    string
		r       *kmsg.ApiVersionsRequest
		version int16
		code    int16
	}{
		{"bad software", request("-bad", nil, -1), 3, kerr.InvalidRequest.Code},
		{"cluster without node", request("franz-go", kmsg.StringPtr("c"), -1), 5, kerr.InvalidRequest.Code},
		{"other node", request("franz-go", kmsg.StringPtr("c"), 2), 5, kerr.RebootstrapRequired.Code},
		{"other cluster", request("franz-go", kmsg.StringPtr("d"), 1), 5, kerr.RebootstrapRequired.Code},
	} {
		resp, ok := Answer(c.r, c.version, n)
		if ok || resp.ErrorCode != c.code || resp.ApiKeys != nil {
			t.Errorf("%s: ok %v, code %d, %d keys; want refused with %d and no keys", c.name, ok, resp.ErrorCode, len(resp.ApiKeys), c.code)
		}
	}
	resp, ok := Answer(request("franz-go", kmsg.StringPtr("c"), 1), 3, n)
	if !ok || resp.ErrorCode != 0 || len(resp.ApiKeys) != 2 {
		t.Fatalf("this node: ok %v, code %d, %d keys", ok, resp.ErrorCode, len(resp.ApiKeys))
	}
	if len(resp.SupportedFeatures) != 1 || resp.SupportedFeatures[0].Name != "transaction.version" || resp.SupportedFeatures[0].MinVersion != 1 {
		t.Fatalf("supported features at v3: %+v", resp.SupportedFeatures)
	}
	if resp, _ := Answer(request("franz-go", nil, -1), 4, n); resp.SupportedFeatures[0].MinVersion != 0 {
		t.Fatalf("v4 supported minimum: %d, want 0", resp.SupportedFeatures[0].MinVersion)
	}
}

// TestUnsupported keeps ApiVersions' row alone.
func TestUnsupported(t *testing.T) {
	resp := Unsupported(node(t).Keys)
	if resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].ApiKey != 18 {
		t.Fatalf("%+v", resp)
	}
}
