package kafka

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/features"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// adminRig is a single node with topics a (3 partitions) and b (2), a log
// dir and an offsets store, and a raw connection to it.
func adminRig(t *testing.T) (*sessionRig, string) {
	t.Helper()
	dir := t.TempDir()
	g := newSessionRig(t, Config{LogDir: dir, Offsets: openOffsets(t, nil)}, map[string]int32{"a": 3, "b": 2})
	return g, dir
}

func dtpReq(limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor, topics ...string) *kmsg.DescribeTopicPartitionsRequest {
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit, req.Cursor = limit, cursor
	for _, n := range topics {
		req.Topics = append(req.Topics, kmsg.DescribeTopicPartitionsRequestTopic{Topic: n})
	}
	return req
}

// dtpShape is a response as "topic:code:first-last" entries and the next
// cursor ("" for none).
func dtpShape(resp *kmsg.DescribeTopicPartitionsResponse) ([]string, string) {
	var out []string
	for _, t := range resp.Topics {
		s := *t.Topic + ":" + strconv.Itoa(int(t.ErrorCode))
		if len(t.Partitions) > 0 {
			s += ":" + strconv.Itoa(int(t.Partitions[0].Partition)) + "-" + strconv.Itoa(int(t.Partitions[len(t.Partitions)-1].Partition))
		}
		out = append(out, s)
	}
	next := ""
	if c := resp.NextCursor; c != nil {
		next = c.Topic + "/" + strconv.Itoa(int(c.Partition))
	}
	return out, next
}

// DescribeTopicPartitions pages as Kafka 4.4 does (KIP-966, kafka/paging):
// name order, the partition limit (at least 1), a cursor where the page
// was cut, the cursor's partition as the start of its topic; named topics
// that do not exist are errors; a cursor not among the named topics, or
// negative, is INVALID_REQUEST for every named topic.
func TestDescribeTopicPartitionsPaging(t *testing.T) {
	g, _ := adminRig(t)
	cur := func(topic string, p int32) *kmsg.DescribeTopicPartitionsRequestCursor {
		return &kmsg.DescribeTopicPartitionsRequestCursor{Topic: topic, Partition: p}
	}
	for _, tc := range []struct {
		name string
		req  *kmsg.DescribeTopicPartitionsRequest
		want []string
		next string
	}{
		{"named, all fit", dtpReq(10, nil, "b", "a"), []string{"a:0:0-2", "b:0:0-1"}, ""},
		{"named, cut inside a", dtpReq(2, nil, "a", "b"), []string{"a:0:0-1"}, "a/2"},
		{"from the cursor", dtpReq(2, cur("a", 2), "a", "b"), []string{"a:0:2-2", "b:0:0-0"}, "b/1"},
		{"limit reached at a topic's start", dtpReq(3, nil, "a", "b"), []string{"a:0:0-2"}, "b/0"},
		{"limit 0 is 1", dtpReq(0, nil, "a"), []string{"a:0:0-0"}, "a/1"},
		{"cursor past the partitions", dtpReq(5, cur("a", 7), "a", "b"), []string{"a:0", "b:0:0-1"}, ""},
		{"missing and invalid names", dtpReq(10, nil, "nope", "bad name!", "a"),
			[]string{"a:0:0-2", "bad name!:17", "nope:3"}, ""},
		{"duplicates once", dtpReq(10, nil, "a", "a"), []string{"a:0:0-2"}, ""},
		{"cursor topic not named", dtpReq(10, cur("z", 0), "a", "b"), []string{"a:42", "b:42"}, ""},
		{"negative cursor partition", dtpReq(10, cur("a", -1), "a"), []string{"a:42"}, ""},
	} {
		resp := ask(g.c, tc.req).(*kmsg.DescribeTopicPartitionsResponse)
		got, next := dtpShape(resp)
		if !slices.Equal(got, tc.want) || next != tc.next {
			t.Errorf("%s: got %v next %q, want %v next %q", tc.name, got, next, tc.want, tc.next)
		}
	}
	// All topics: internal ones too, marked so, each partition led by
	// this node alone, ids as Metadata's, operations filled.
	resp := ask(g.c, dtpReq(2000, nil)).(*kmsg.DescribeTopicPartitionsResponse)
	got, next := dtpShape(resp)
	want := []string{"__consumer_offsets:0:0-0", "__transaction_state:0:0-0", "a:0:0-2", "b:0:0-1"}
	if !slices.Equal(got, want) || next != "" {
		t.Fatalf("all topics: %v next %q, want %v", got, next, want)
	}
	ta, _ := g.s.res.Topic("a")
	for _, tp := range resp.Topics {
		if tp.IsInternal != strings.HasPrefix(*tp.Topic, "__") || tp.AuthorizedOperations == authOpsNotRequested {
			t.Errorf("%s: internal %v, operations %d", *tp.Topic, tp.IsInternal, tp.AuthorizedOperations)
		}
		if *tp.Topic == "a" && tp.TopicID != ta.ID {
			t.Errorf("a: id %x, want %x", tp.TopicID, ta.ID)
		}
		for _, p := range tp.Partitions {
			if p.LeaderID != 0 || !slices.Equal(p.Replicas, []int32{0}) || !slices.Equal(p.ISR, []int32{0}) || p.EligibleLeaderReplicas == nil {
				t.Errorf("%s-%d: %+v", *tp.Topic, p.Partition, p)
			}
		}
	}
	// An all-topics cursor: from it on, unknown cursor topics allowed.
	got, next = dtpShape(ask(g.c, dtpReq(2, cur("a", 1))).(*kmsg.DescribeTopicPartitionsResponse))
	if want := []string{"a:0:1-2"}; !slices.Equal(got, want) || next != "b/0" {
		t.Errorf("all from a/1: %v next %q, want %v next b/0", got, next, want)
	}
	got, next = dtpShape(ask(g.c, dtpReq(2, cur("zz", 0))).(*kmsg.DescribeTopicPartitionsResponse))
	if len(got) != 0 || next != "" {
		t.Errorf("all from zz: %v next %q, want nothing", got, next)
	}
}

// DescribeTopicPartitions authorizes as Metadata (per-API authorization): a named topic
// without DESCRIBE is TOPIC_AUTHORIZATION_FAILED with no id, after the
// page and outside its limit; an all-topics answer leaves it out.
func TestDescribeTopicPartitionsAuthz(t *testing.T) {
	rc := authzConn(t, "User:alice", acl(auth.ResourceTopic, "t", auth.OpDescribe))
	s := rc.conn.s
	if _, err := s.res.CreateTopic("hidden", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	resp, _ := handleDescribeTopicPartitions(s, rc, dtpReq(1, nil, "hidden", "t"))
	got, next := dtpShape(resp.(*kmsg.DescribeTopicPartitionsResponse))
	if want := []string{"t:0:0-0", "hidden:29"}; !slices.Equal(got, want) || next != "" {
		t.Errorf("named: %v next %q, want %v", got, next, want)
	}
	if r := resp.(*kmsg.DescribeTopicPartitionsResponse); r.Topics[1].TopicID != [16]byte{} {
		t.Error("a refused topic's id is disclosed")
	}
	resp, _ = handleDescribeTopicPartitions(s, rc, dtpReq(10, nil))
	got, _ = dtpShape(resp.(*kmsg.DescribeTopicPartitionsResponse))
	if want := []string{"t:0:0-0"}; !slices.Equal(got, want) {
		t.Errorf("all topics: %v, want %v", got, want)
	}
}

func logDirsReq(v int16, topics map[string][]int32) *kmsg.DescribeLogDirsRequest {
	req := kmsg.NewPtrDescribeLogDirsRequest()
	req.SetVersion(v)
	if topics != nil {
		req.Topics = []kmsg.DescribeLogDirsRequestTopic{}
		for name, ps := range topics {
			req.Topics = append(req.Topics, kmsg.DescribeLogDirsRequestTopic{Topic: name, Partitions: ps})
		}
	}
	return req
}

// DescribeLogDirs describes the log dir, each partition with its local
// bytes (the sizes themselves are checked against the segment files in
// test/admin_logdirs_test.go); named partitions that do not exist are
// left out; the file system's sizes from v4.
func TestDescribeLogDirs(t *testing.T) {
	g, dir := adminRig(t)
	g.produce("a", 1)
	resp := ask(g.c, logDirsReq(5, nil)).(*kmsg.DescribeLogDirsResponse)
	if resp.ErrorCode != 0 || len(resp.Dirs) != 1 || resp.Dirs[0].Dir != dir {
		t.Fatalf("dirs %+v, want the one log dir %s", resp.Dirs, dir)
	}
	d := resp.Dirs[0]
	if d.TotalBytes <= 0 || d.UsableBytes < 0 || d.UsableBytes > d.TotalBytes {
		t.Errorf("total %d usable %d", d.TotalBytes, d.UsableBytes)
	}
	sizes := map[string]int64{}
	for _, tp := range d.Topics {
		for _, p := range tp.Partitions {
			sizes[tp.Topic+"-"+strconv.Itoa(int(p.Partition))] = p.Size
		}
	}
	if len(sizes) != 5 || sizes["a-1"] <= 0 || sizes["a-0"] != 0 || sizes["b-1"] != 0 {
		t.Errorf("sizes %v: want a-0..2 and b-0..1, only a-1 non-empty", sizes)
	}
	named := ask(g.c, logDirsReq(3, map[string][]int32{"a": {1, 9}, "nope": {0}})).(*kmsg.DescribeLogDirsResponse)
	if dd := named.Dirs[0]; len(dd.Topics) != 1 || dd.Topics[0].Topic != "a" || len(dd.Topics[0].Partitions) != 1 ||
		dd.Topics[0].Partitions[0].Size != sizes["a-1"] || dd.TotalBytes != -1 {
		t.Errorf("named v3: %+v, want a-1 alone and no file system sizes", dd)
	}
	empty := ask(g.c, logDirsReq(5, map[string][]int32{})).(*kmsg.DescribeLogDirsResponse)
	if len(empty.Dirs) != 1 || len(empty.Dirs[0].Topics) != 0 {
		t.Errorf("empty list: %+v, want the dir with no topics", empty.Dirs)
	}
}

func alterLogDirsReq(dir string, topic string, parts ...int32) *kmsg.AlterReplicaLogDirsRequest {
	req := kmsg.NewPtrAlterReplicaLogDirsRequest()
	req.SetVersion(2)
	req.Dirs = []kmsg.AlterReplicaLogDirsRequestDir{{Dir: dir, Topics: []kmsg.AlterReplicaLogDirsRequestDirTopic{{Topic: topic, Partitions: parts}}}}
	return req
}

// AlterReplicaLogDirs as a Kafka with one log dir: the log dir is NONE,
// another LOG_DIR_NOT_FOUND, a missing partition
// UNKNOWN_TOPIC_OR_PARTITION, a name too long for the future replica's
// directory INVALID_TOPIC_EXCEPTION.
func TestAlterReplicaLogDirs(t *testing.T) {
	g, dir := adminRig(t)
	long := strings.Repeat("x", 240)
	for _, tc := range []struct {
		dir, topic string
		part       int32
		want       int16
	}{
		{dir, "a", 0, 0},
		{dir + "/", "a", 0, kerr.LogDirNotFound.Code},
		{"relative", "a", 0, kerr.LogDirNotFound.Code},
		{dir, "a", 9, kerr.UnknownTopicOrPartition.Code},
		{dir, "nope", 0, kerr.UnknownTopicOrPartition.Code},
		{dir, long, 0, kerr.InvalidTopicException.Code},
	} {
		resp := ask(g.c, alterLogDirsReq(tc.dir, tc.topic, tc.part)).(*kmsg.AlterReplicaLogDirsResponse)
		if got := resp.Topics[0].Partitions[0].ErrorCode; got != tc.want {
			t.Errorf("%s %s-%d: %d, want %d", tc.dir, tc.topic, tc.part, got, tc.want)
		}
	}
}

func electReq(typ int8, topics map[string][]int32) *kmsg.ElectLeadersRequest {
	req := kmsg.NewPtrElectLeadersRequest()
	req.SetVersion(2)
	req.ElectionType = typ
	if topics != nil {
		req.Topics = []kmsg.ElectLeadersRequestTopic{}
		for name, ps := range topics {
			req.Topics = append(req.Topics, kmsg.ElectLeadersRequestTopic{Topic: name, Partitions: ps})
		}
	}
	return req
}

// ElectLeaders on single-replica partitions: ELECTION_NOT_NEEDED for
// both types, UNKNOWN_TOPIC_OR_PARTITION for what does not exist,
// INVALID_REQUEST for an unknown type; all partitions list every topic
// with none (none needed an election).
func TestElectLeaders(t *testing.T) {
	g, _ := adminRig(t)
	for _, typ := range []int8{0, 1} {
		resp := ask(g.c, electReq(typ, map[string][]int32{"a": {0, 9}})).(*kmsg.ElectLeadersResponse)
		ps := resp.Topics[0].Partitions
		if resp.ErrorCode != 0 || ps[0].ErrorCode != kerr.ElectionNotNeeded.Code || ps[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Errorf("type %d: %+v", typ, resp)
		}
	}
	resp := ask(g.c, electReq(0, map[string][]int32{"nope": {0}})).(*kmsg.ElectLeadersResponse)
	if resp.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown topic: %+v", resp)
	}
	resp = ask(g.c, electReq(5, map[string][]int32{"a": {0}})).(*kmsg.ElectLeadersResponse)
	if resp.ErrorCode != kerr.InvalidRequest.Code || resp.Topics[0].Partitions[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("type 5: %+v", resp)
	}
	v0 := electReq(1, map[string][]int32{"a": {0}})
	v0.SetVersion(0)
	if resp := ask(g.c, v0).(*kmsg.ElectLeadersResponse); resp.Topics[0].Partitions[0].ErrorCode != kerr.ElectionNotNeeded.Code {
		t.Errorf("v0: %+v", resp)
	}
	resp = ask(g.c, electReq(0, nil)).(*kmsg.ElectLeadersResponse)
	var names []string
	for _, tp := range resp.Topics {
		names = append(names, tp.Topic)
		if len(tp.Partitions) != 0 {
			t.Errorf("all: %s lists %+v", tp.Topic, tp.Partitions)
		}
	}
	if want := []string{"__consumer_offsets", "__transaction_state", "a", "b"}; !slices.Equal(names, want) {
		t.Errorf("all: topics %v, want %v", names, want)
	}
}

func reassignReq(topic string, part int32, replicas []int32) *kmsg.AlterPartitionAssignmentsRequest {
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.SetVersion(1)
	req.AllowReplicationFactorChange = true
	req.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: topic,
		Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: part, Replicas: replicas}}}}
	return req
}

// AlterPartitionReassignments on a single node: the current replica set
// is accepted, an unregistered or repeated broker or an empty list is
// INVALID_REPLICA_ASSIGNMENT, a cancel NO_REASSIGNMENT_IN_PROGRESS; and
// ListPartitionReassignments finds none.
func TestPartitionReassignments(t *testing.T) {
	g, _ := adminRig(t)
	for _, tc := range []struct {
		topic    string
		part     int32
		replicas []int32
		want     int16
	}{
		{"a", 0, []int32{0}, 0},
		{"a", 0, []int32{5}, kerr.InvalidReplicaAssignment.Code},
		{"a", 0, []int32{0, 5}, kerr.InvalidReplicaAssignment.Code},
		{"a", 0, []int32{0, 0}, kerr.InvalidReplicaAssignment.Code},
		{"a", 0, []int32{}, kerr.InvalidReplicaAssignment.Code},
		{"a", 0, nil, kerr.NoReassignmentInProgress.Code},
		{"a", 9, []int32{0}, kerr.UnknownTopicOrPartition.Code},
		{"nope", 0, []int32{0}, kerr.UnknownTopicOrPartition.Code},
	} {
		resp := ask(g.c, reassignReq(tc.topic, tc.part, tc.replicas)).(*kmsg.AlterPartitionAssignmentsResponse)
		if got := resp.Topics[0].Partitions[0].ErrorCode; resp.ErrorCode != 0 || got != tc.want {
			t.Errorf("%s-%d to %v: %d (top %d), want %d", tc.topic, tc.part, tc.replicas, got, resp.ErrorCode, tc.want)
		}
	}
	list := kmsg.NewPtrListPartitionReassignmentsRequest()
	if resp := ask(g.c, list).(*kmsg.ListPartitionReassignmentsResponse); resp.ErrorCode != 0 || len(resp.Topics) != 0 {
		t.Errorf("list: %+v, want none", resp)
	}
}

// The cluster-scoped admin APIs refuse a principal without the cluster
// operation Kafka asks: ALTER for AlterReplicaLogDirs, ElectLeaders,
// AlterPartitionReassignments and UpdateFeatures, DESCRIBE for
// DescribeLogDirs and ListPartitionReassignments, DESCRIBE_CONFIGS for
// ListConfigResources; and serve one with it.
func TestAdminAPIsClusterAuthz(t *testing.T) {
	clusterACL := func(op auth.Operation) auth.ACL { return acl(auth.ResourceCluster, auth.ClusterName, op) }
	refused := kerr.ClusterAuthorizationFailed.Code
	codeOf := func(resp kmsg.Response) []int16 {
		switch r := resp.(type) {
		case *kmsg.DescribeLogDirsResponse:
			return []int16{r.ErrorCode, int16(len(r.Dirs))}
		case *kmsg.AlterReplicaLogDirsResponse:
			return []int16{r.Topics[0].Partitions[0].ErrorCode}
		case *kmsg.ElectLeadersResponse:
			return []int16{r.ErrorCode, r.Topics[0].Partitions[0].ErrorCode}
		case *kmsg.AlterPartitionAssignmentsResponse:
			return []int16{r.ErrorCode, r.Topics[0].Partitions[0].ErrorCode}
		case *kmsg.ListPartitionReassignmentsResponse:
			return []int16{r.ErrorCode}
		case *kmsg.UpdateFeaturesResponse:
			return []int16{r.ErrorCode}
		case *kmsg.ListConfigResourcesResponse:
			return []int16{r.ErrorCode}
		}
		t.Fatalf("%T", resp)
		return nil
	}
	upd := kmsg.NewPtrUpdateFeaturesRequest()
	upd.SetVersion(1)
	upd.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{{Feature: transactionVersionFeature, MaxVersionLevel: 2, UpgradeType: 1}}
	lcr := kmsg.NewPtrListConfigResourcesRequest()
	lcr.SetVersion(1)
	lcr.ResourceTypes = []int8{configTypeBroker, configTypeTopic} // this bare server has no coordinators
	for _, tc := range []struct {
		req     kmsg.Request
		handle  func(*Server, *reqCtx, kmsg.Request) (kmsg.Response, error)
		op      auth.Operation
		refused []int16
	}{
		{logDirsReq(3, nil), handleDescribeLogDirs, auth.OpDescribe, []int16{refused, 0}},
		{alterLogDirsReq("/x", "t", 0), handleAlterReplicaLogDirs, auth.OpAlter, []int16{refused}},
		{electReq(0, map[string][]int32{"t": {0}}), handleElectLeaders, auth.OpAlter, []int16{refused, refused}},
		{reassignReq("t", 0, []int32{0}), handleAlterPartitionReassignments, auth.OpAlter, []int16{refused, refused}},
		{kmsg.NewPtrListPartitionReassignmentsRequest(), handleListPartitionReassignments, auth.OpDescribe, []int16{refused}},
		{upd, handleUpdateFeatures, auth.OpAlter, []int16{refused}},
		{lcr, handleListConfigResources, auth.OpDescribeConfigs, []int16{refused}},
	} {
		name := kmsg.NameForKey(tc.req.Key())
		for _, granted := range []bool{false, true} {
			var acls []auth.ACL
			if granted {
				acls = append(acls, clusterACL(tc.op))
			} else {
				acls = append(acls, clusterACL(auth.OpIdempotentWrite)) // some other cluster operation
			}
			rc := authzConn(t, "User:alice", acls...)
			rc.conn.s.cfg.LogDir = t.TempDir()
			var err error
			if rc.conn.s.features, err = features.Open("", featureSpecs); err != nil {
				t.Fatal(err)
			}
			resp, err := tc.handle(rc.conn.s, rc, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			got := codeOf(resp)
			if refusedGot := slices.Equal(got, tc.refused); refusedGot == granted {
				t.Errorf("%s granted=%v: codes %v", name, granted, got)
			}
		}
	}
}

func updateReq(v int16, validate bool, updates ...kmsg.UpdateFeaturesRequestFeatureUpdate) *kmsg.UpdateFeaturesRequest {
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.SetVersion(v)
	req.ValidateOnly, req.FeatureUpdates = validate, updates
	return req
}

func fu(name string, level int16, typ int8) kmsg.UpdateFeaturesRequestFeatureUpdate {
	return kmsg.UpdateFeaturesRequestFeatureUpdate{Feature: name, MaxVersionLevel: level, UpgradeType: typ, AllowDowngrade: typ != 1}
}

// finalizedTV is transaction.version as ApiVersions v4 reports it (-1:
// not listed) and the features epoch.
func finalizedTV(g *sessionRig) (int16, int64) {
	g.t.Helper()
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(4)
	av.ClientSoftwareName, av.ClientSoftwareVersion = "t", "1"
	resp := ask(g.c, av).(*kmsg.ApiVersionsResponse)
	for _, f := range resp.FinalizedFeatures {
		if f.Name == transactionVersionFeature {
			return f.MaxVersionLevel, resp.FinalizedFeaturesEpoch
		}
	}
	return -1, resp.FinalizedFeaturesEpoch
}

// UpdateFeatures refuses with Kafka's INVALID_UPDATE_VERSION and messages
// (nothing changes), and otherwise changes what ApiVersions finalizes:
// validate_only does not; level 0 takes the feature out; each change
// bumps the epoch; v0's allow_downgrade is a safe downgrade; v2 has no
// per-feature results.
func TestUpdateFeatures(t *testing.T) {
	g, dir := adminRig(t)
	for _, tc := range []struct {
		name   string
		req    *kmsg.UpdateFeaturesRequest
		reason string
	}{
		{"above the range", updateReq(1, false, fu(transactionVersionFeature, 3, 1)), "Local controller 0 only supports versions 0-2"},
		{"negative", updateReq(1, false, fu(transactionVersionFeature, -1, 2)), "A feature version cannot be less than 0."},
		{"unknown feature", updateReq(1, false, fu("kd.unknown.version", 1, 1)), "Local controller 0 does not support this feature."},
		{"share.version above the range", updateReq(1, false, fu(shareVersionFeature, 3, 1)), "Local controller 0 only supports versions 0-2"},
		{"downgrade as upgrade", updateReq(1, false, fu(transactionVersionFeature, 1, 1)), "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."},
		{"bad upgrade type", updateReq(1, false, fu(transactionVersionFeature, 1, 7)), "The controller does not support the given upgrade type."},
		{"one bad refuses all", updateReq(1, false, fu(transactionVersionFeature, 1, 2), fu("nope", 1, 1)), "Local controller 0 does not support this feature."},
		{"v0 without allow_downgrade", updateReq(0, false, fu(transactionVersionFeature, 1, 1)), "Can't downgrade the version"},
	} {
		resp := ask(g.c, tc.req).(*kmsg.UpdateFeaturesResponse)
		if resp.ErrorCode != kerr.InvalidUpdateVersion.Code || resp.ErrorMessage == nil || !strings.Contains(*resp.ErrorMessage, tc.reason) || len(resp.Results) != 0 {
			t.Errorf("%s: %d %v %+v, want INVALID_UPDATE_VERSION: %s", tc.name, resp.ErrorCode, deref(resp.ErrorMessage), resp.Results, tc.reason)
		}
	}
	if lv, epoch := finalizedTV(g); lv != 2 || epoch != 1 {
		t.Fatalf("after refusals: transaction.version %d epoch %d, want 2 and 1", lv, epoch)
	}
	resp := ask(g.c, updateReq(1, true, fu(transactionVersionFeature, 1, 2))).(*kmsg.UpdateFeaturesResponse)
	if resp.ErrorCode != 0 || len(resp.Results) != 1 || resp.Results[0].Feature != transactionVersionFeature {
		t.Fatalf("validate only: %+v", resp)
	}
	if lv, _ := finalizedTV(g); lv != 2 {
		t.Fatalf("validate_only changed transaction.version to %d", lv)
	}
	resp = ask(g.c, updateReq(0, false, fu(transactionVersionFeature, 1, 2))).(*kmsg.UpdateFeaturesResponse)
	if lv, epoch := finalizedTV(g); resp.ErrorCode != 0 || lv != 1 || epoch != 2 {
		t.Fatalf("v0 safe downgrade to 1: %d; served %d epoch %d", resp.ErrorCode, lv, epoch)
	}
	resp = ask(g.c, updateReq(2, false, fu(transactionVersionFeature, 0, 3))).(*kmsg.UpdateFeaturesResponse)
	if lv, epoch := finalizedTV(g); resp.ErrorCode != 0 || resp.Results != nil || lv != -1 || epoch != 3 {
		t.Fatalf("v2 unsafe downgrade to 0: %+v; served %d epoch %d, want unlisted", resp, lv, epoch)
	}
	resp = ask(g.c, updateReq(1, false, fu(transactionVersionFeature, 1, 2))).(*kmsg.UpdateFeaturesResponse)
	if resp.ErrorCode != kerr.InvalidUpdateVersion.Code || !strings.Contains(deref(resp.ErrorMessage), "Can't downgrade to a newer version.") {
		t.Errorf("upgrade typed as a downgrade: %d %s", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	resp = ask(g.c, updateReq(1, false, fu(transactionVersionFeature, 2, 1))).(*kmsg.UpdateFeaturesResponse)
	if lv, epoch := finalizedTV(g); resp.ErrorCode != 0 || lv != 2 || epoch != 4 {
		t.Fatalf("upgrade to 2: %d; served %d epoch %d", resp.ErrorCode, lv, epoch)
	}
	// The levels are in the log dir: a server opened on it serves them.
	ask(g.c, updateReq(1, false, fu(transactionVersionFeature, 1, 2)))
	reopened, err := features.Open(filepath.Join(dir, "features.json"), featureSpecs)
	if err != nil {
		t.Fatal(err)
	}
	if lv := reopened.Level(transactionVersionFeature); lv != 1 {
		t.Errorf("reopened: transaction.version %d, want 1", lv)
	}
}

// ListConfigResources lists what DescribeConfigs describes: the broker,
// every topic, the groups with configs set; client metrics (none) alone
// at v0; BROKER_LOGGER and unknown types are UNSUPPORTED_VERSION.
func TestListConfigResources(t *testing.T) {
	g, _ := adminRig(t)
	iac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceType(configTypeGroup), "g1"
	r.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "share.auto.offset.reset", Value: kmsg.StringPtr("earliest")}}
	iac.Resources = append(iac.Resources, r)
	if resp := ask(g.c, iac).(*kmsg.IncrementalAlterConfigsResponse); resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("set group config: %d", resp.Resources[0].ErrorCode)
	}
	list := func(v int16, types ...int8) (int16, []string) {
		req := kmsg.NewPtrListConfigResourcesRequest()
		req.SetVersion(v)
		req.ResourceTypes = types
		resp := ask(g.c, req).(*kmsg.ListConfigResourcesResponse)
		var out []string
		for _, c := range resp.ConfigResources {
			out = append(out, strconv.Itoa(int(c.Type))+":"+c.Name)
		}
		return resp.ErrorCode, out
	}
	all := []string{"4:0", "2:__consumer_offsets", "2:__transaction_state", "2:a", "2:b", "32:g1", "8:0"}
	for _, tc := range []struct {
		v     int16
		types []int8
		code  int16
		want  []string
	}{
		{0, nil, 0, nil},
		{1, nil, 0, all},
		{1, []int8{32, 4}, 0, []string{"4:0", "32:g1"}},
		{1, []int8{16}, 0, nil},
		{1, []int8{8}, 0, []string{"8:0"}}, // this node's loggers
		{1, []int8{2, 99}, kerr.UnsupportedVersion.Code, nil},
	} {
		code, got := list(tc.v, tc.types...)
		if code != tc.code || !slices.Equal(got, tc.want) {
			t.Errorf("v%d %v: %d %v, want %d %v", tc.v, tc.types, code, got, tc.code, tc.want)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
