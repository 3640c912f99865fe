package kafka

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka/quota"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func sp(s string) *string { return &s }

type quotaEnt struct {
	typ  string
	name *string
}

func alterQuotasReq(validate bool, ents []quotaEnt, ops ...kmsg.AlterClientQuotasRequestEntryOp) *kmsg.AlterClientQuotasRequest {
	r := kmsg.NewPtrAlterClientQuotasRequest()
	r.Version, r.ValidateOnly = 1, validate
	e := kmsg.NewAlterClientQuotasRequestEntry()
	for _, en := range ents {
		c := kmsg.NewAlterClientQuotasRequestEntryEntity()
		c.Type, c.Name = en.typ, en.name
		e.Entity = append(e.Entity, c)
	}
	e.Ops = ops
	r.Entries = append(r.Entries, e)
	return r
}

func quotaSetOp(k string, v float64) kmsg.AlterClientQuotasRequestEntryOp {
	o := kmsg.NewAlterClientQuotasRequestEntryOp()
	o.Key, o.Value = k, v
	return o
}

func describeQuotasReq(strict bool, cs ...kmsg.DescribeClientQuotasRequestComponent) *kmsg.DescribeClientQuotasRequest {
	r := kmsg.NewPtrDescribeClientQuotasRequest()
	r.Version, r.Strict, r.Components = 1, strict, cs
	return r
}

func quotaComp(t string, m kmsg.QuotasMatchType, name *string) kmsg.DescribeClientQuotasRequestComponent {
	c := kmsg.NewDescribeClientQuotasRequestComponent()
	c.EntityType, c.MatchType, c.Match = t, m, name
	return c
}

func (c *rawConn) alterQuotas(corr int32, r *kmsg.AlterClientQuotasRequest) *kmsg.AlterClientQuotasResponse {
	c.t.Helper()
	c.send(corr, r)
	resp := r.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	resp.SetVersion(r.Version)
	c.recv(resp)
	return resp
}

func (c *rawConn) describeQuotas(corr int32, r *kmsg.DescribeClientQuotasRequest) *kmsg.DescribeClientQuotasResponse {
	c.t.Helper()
	c.send(corr, r)
	resp := r.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	resp.SetVersion(r.Version)
	c.recv(resp)
	return resp
}

// TestClientQuotasAlterDescribe sets quotas of each entity kind, defaults
// included, through AlterClientQuotas and reads them back with
// DescribeClientQuotas filters; refused alterations change nothing.
func TestClientQuotasAlterDescribe(t *testing.T) {
	s := startServer(t, Config{})
	c := dialRaw(t, s.Addr())
	user, client, ip := quotaEnt{quota.TypeUser, sp("alice")}, quotaEnt{quota.TypeClientID, sp("app")}, quotaEnt{quota.TypeIP, sp("10.1.2.3")}
	defUser, defClient := quotaEnt{quota.TypeUser, nil}, quotaEnt{quota.TypeClientID, nil}
	for i, a := range []*kmsg.AlterClientQuotasRequest{
		alterQuotasReq(false, []quotaEnt{user}, quotaSetOp(quota.ProducerByteRate, 1024), quotaSetOp(quota.ConsumerByteRate, 2048)),
		alterQuotasReq(false, []quotaEnt{defUser}, quotaSetOp(quota.ProducerByteRate, 500)),
		alterQuotasReq(false, []quotaEnt{user, client}, quotaSetOp(quota.RequestPercentage, 12.5)),
		alterQuotasReq(false, []quotaEnt{defUser, defClient}, quotaSetOp(quota.ControllerMutationRate, 3)),
		alterQuotasReq(false, []quotaEnt{defClient}, quotaSetOp(quota.ConsumerByteRate, 100)),
		alterQuotasReq(false, []quotaEnt{ip}, quotaSetOp(quota.ConnectionCreationRate, 5)),
		alterQuotasReq(true, []quotaEnt{{quota.TypeUser, sp("dave")}}, quotaSetOp(quota.ProducerByteRate, 5)),
	} {
		resp := c.alterQuotas(int32(i), a)
		if len(resp.Entries) != 1 || resp.Entries[0].ErrorCode != 0 {
			t.Fatalf("alteration %d: %+v", i, resp.Entries)
		}
	}
	// user+client-id is answered client-id first, as Kafka does.
	resp := c.alterQuotas(20, alterQuotasReq(false, []quotaEnt{user, client}, quotaSetOp(quota.RequestPercentage, 12.5)))
	if e := resp.Entries[0].Entity; len(e) != 2 || e[0].Type != quota.TypeClientID || e[1].Type != quota.TypeUser {
		t.Fatalf("entity order %+v", e)
	}
	for i, bad := range []struct {
		req *kmsg.AlterClientQuotasRequest
		msg string
	}{
		{alterQuotasReq(false, []quotaEnt{user}, quotaSetOp(quota.ProducerByteRate, 0)), "Quota producer_byte_rate must be greater than 0"},
		{alterQuotasReq(false, []quotaEnt{user}, quotaSetOp(quota.ProducerByteRate, 1.5)), "producer_byte_rate cannot be a fractional value."},
		{alterQuotasReq(false, []quotaEnt{user}, quotaSetOp(quota.ConnectionCreationRate, 1)), "Invalid configuration key connection_creation_rate"},
		{alterQuotasReq(false, []quotaEnt{user, ip}, quotaSetOp(quota.ProducerByteRate, 1)), "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"},
		{alterQuotasReq(false, []quotaEnt{{quota.TypeUser, sp("")}}, quotaSetOp(quota.ProducerByteRate, 1)), "Empty user not supported"},
		{alterQuotasReq(false, nil, quotaSetOp(quota.ProducerByteRate, 1)), "Invalid empty client quota entity"},
	} {
		resp := c.alterQuotas(int32(30+i), bad.req)
		e := resp.Entries[0]
		if e.ErrorCode != kerr.InvalidRequest.Code || e.ErrorMessage == nil || *e.ErrorMessage != bad.msg {
			t.Fatalf("bad alteration %d: code %d message %v, want INVALID_REQUEST %q", i, e.ErrorCode, e.ErrorMessage, bad.msg)
		}
	}

	count := func(corr int32, r *kmsg.DescribeClientQuotasRequest) int {
		t.Helper()
		resp := c.describeQuotas(corr, r)
		if resp.ErrorCode != 0 {
			t.Fatalf("describe: %v %v", resp.ErrorCode, resp.ErrorMessage)
		}
		return len(resp.Entries)
	}
	for i, ck := range []struct {
		name string
		req  *kmsg.DescribeClientQuotasRequest
		want int
	}{
		{"all", describeQuotasReq(false), 6},
		{"any user", describeQuotasReq(false, quotaComp(quota.TypeUser, 2, nil)), 4},
		{"any user, strict", describeQuotasReq(true, quotaComp(quota.TypeUser, 2, nil)), 2},
		{"alice", describeQuotasReq(false, quotaComp(quota.TypeUser, 0, sp("alice"))), 2},
		{"default user, strict", describeQuotasReq(true, quotaComp(quota.TypeUser, 1, nil)), 1},
		{"default client", describeQuotasReq(false, quotaComp(quota.TypeClientID, 1, nil)), 2},
		{"ip", describeQuotasReq(false, quotaComp(quota.TypeIP, 2, nil)), 1},
		{"validate-only dave", describeQuotasReq(false, quotaComp(quota.TypeUser, 0, sp("dave"))), 0},
	} {
		if got := count(int32(50+i), ck.req); got != ck.want {
			t.Errorf("%s: %d entries, want %d", ck.name, got, ck.want)
		}
	}
	d := c.describeQuotas(70, describeQuotasReq(true, quotaComp(quota.TypeUser, 0, sp("alice"))))
	vals := map[string]float64{}
	for _, v := range d.Entries[0].Values {
		vals[v.Key] = v.Value
	}
	if vals[quota.ProducerByteRate] != 1024 || vals[quota.ConsumerByteRate] != 2048 || len(vals) != 2 {
		t.Fatalf("alice's quotas %v", vals)
	}
	d = c.describeQuotas(71, describeQuotasReq(false, quotaComp(quota.TypeUser, 1, nil), quotaComp(quota.TypeClientID, 1, nil)))
	if len(d.Entries) != 1 || d.Entries[0].Entity[0].Name != nil || d.Entries[0].Entity[1].Name != nil {
		t.Fatalf("default user and client: %+v", d.Entries)
	}
	for i, bad := range []struct {
		req  *kmsg.DescribeClientQuotasRequest
		code int16
	}{
		{describeQuotasReq(false, quotaComp(quota.TypeUser, 1, sp("x"))), kerr.InvalidRequest.Code},
		{describeQuotasReq(false, quotaComp(quota.TypeUser, 0, nil)), kerr.InvalidRequest.Code},
		{describeQuotasReq(false, quotaComp(quota.TypeIP, 2, nil), quotaComp(quota.TypeUser, 2, nil)), kerr.InvalidRequest.Code},
		{describeQuotasReq(false, quotaComp("group", 2, nil)), kerr.UnsupportedVersion.Code},
	} {
		if r := c.describeQuotas(int32(80+i), bad.req); r.ErrorCode != bad.code || r.Entries != nil {
			t.Fatalf("bad filter %d: code %d entries %v, want %d", i, r.ErrorCode, r.Entries, bad.code)
		}
	}
}

// quotaObserver records throttles (QuotaObserver).
type quotaObserver struct {
	mu        sync.Mutex
	throttles map[string]time.Duration
}

func (o *quotaObserver) Request(string, int, time.Duration) {}
func (o *quotaObserver) Response(string, int)               {}
func (o *quotaObserver) ProduceBytes(string, int)           {}
func (o *quotaObserver) FetchBytes(string, int)             {}

func (o *quotaObserver) Throttled(kind, user, clientID string, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.throttles[kind+"/"+user+"/"+clientID] += d
}

// valueBatch encodes an uncompressed batch of one record of n bytes.
func valueBatch(n int) []byte {
	r := kmsg.Record{Value: bytes.Repeat([]byte("q"), n)}
	r.Length = int32(len(r.AppendTo(nil)) - 1)
	b := kmsg.RecordBatch{Magic: 2, FirstTimestamp: 1, MaxTimestamp: 1, ProducerID: -1, ProducerEpoch: -1,
		FirstSequence: -1, NumRecords: 1, Records: r.AppendTo(nil), PartitionLeaderEpoch: -1}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// rawProduce is a Produce of one batch of about n bytes, and the size of
// its frame as rawConn.send writes it (what the producer quota counts).
func rawProduce(version int16, topic string, n int) (*kmsg.ProduceRequest, int) {
	r := kmsg.NewPtrProduceRequest()
	r.Version, r.Acks, r.TimeoutMillis = version, -1, 5000
	t := kmsg.NewProduceRequestTopic()
	t.Topic = topic
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = valueBatch(n)
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	size := 2 + 2 + 4 + 2 + len(r.AppendTo(nil))
	if r.IsFlexible() {
		size++
	}
	return r, size
}

func quotaStoreWith(t *testing.T, e quota.Component, key string, v float64) *quota.Store {
	t.Helper()
	st := quota.NewMemStore()
	res, err := st.Alter([]quota.Alteration{{Entity: []quota.Component{e}, Ops: []quota.Op{{Key: key, Value: v}}}}, false)
	if err != nil || res[0].Err != nil {
		t.Fatalf("alter: %v %v", err, res[0].Err)
	}
	return st
}

// A Produce over producer_byte_rate is answered at once with its
// throttle time, (rate-quota)/quota × window, and the connection is then
// not read for that long (KIP-219); a Produce version from before KIP-219
// gets its answer only after the throttle time. Throttles are observed
// per user and client id.
func TestProduceQuotaThrottles(t *testing.T) {
	for _, v := range []int16{9, 5} {
		obs := &quotaObserver{throttles: map[string]time.Duration{}}
		// The default user's quota: 1000 B/s, measured over at least
		// 10 s; a first Produce of size bytes is throttled size-10000 ms.
		st := quotaStoreWith(t, quota.Component{Type: quota.TypeUser}, quota.ProducerByteRate, 1000)
		g := newSessionRig(t, Config{Quotas: st, Observer: obs}, map[string]int32{"q": 1})
		req, size := rawProduce(v, "q", 10_400)
		want := int32(size - 10_000)
		start := time.Now()
		resp := ask(g.c, req).(*kmsg.ProduceResponse)
		took := time.Since(start)
		if resp.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("v%d: produce error %d", v, resp.Topics[0].Partitions[0].ErrorCode)
		}
		if v >= 6 && resp.ThrottleMillis != want {
			t.Fatalf("v%d: throttle_time_ms %d, want %d (frame %d bytes)", v, resp.ThrottleMillis, want, size)
		}
		throttle := time.Duration(want) * time.Millisecond
		if v < 6 {
			if took < throttle-50*time.Millisecond {
				t.Fatalf("v%d: answered after %v, before the throttle %v", v, took, throttle)
			}
		} else {
			start = time.Now()
			ask(g.c, kmsg.NewPtrApiVersionsRequest())
			if took := time.Since(start); took < throttle-100*time.Millisecond {
				t.Fatalf("v%d: next request answered after %v, within the %v mute", v, took, throttle)
			}
		}
		obs.mu.Lock()
		got := obs.throttles[quota.ProducerByteRate+"/ANONYMOUS/"]
		obs.mu.Unlock()
		if got != throttle {
			t.Fatalf("v%d: observed throttle %v, want %v", v, got, throttle)
		}
	}
}

// A Fetch over consumer_byte_rate answers nothing, with its throttle
// time (Kafka's empty throttled response); the records are not counted,
// and once the quota is removed a new connection fetches them.
func TestFetchQuotaDropsRecords(t *testing.T) {
	st := quotaStoreWith(t, quota.Component{Type: quota.TypeClientID}, quota.ConsumerByteRate, 1)
	g := newSessionRig(t, Config{Quotas: st}, map[string]int32{"f": 1})
	g.produce("f", 0)
	req := fetchReq(0, -1, []fetchPart{{"f", 0, 0}}, nil)
	resp := g.fetch(req)
	if resp.ThrottleMillis <= 0 || len(resp.Topics) != 0 {
		t.Fatalf("throttled fetch: throttle %d, %d topics, want throttled and none (as Kafka)", resp.ThrottleMillis, len(resp.Topics))
	}
	if _, err := st.Alter([]quota.Alteration{{Entity: []quota.Component{{Type: quota.TypeClientID}},
		Ops: []quota.Op{{Key: quota.ConsumerByteRate, Remove: true}}}}, false); err != nil {
		t.Fatal(err)
	}
	g.c = dialRaw(t, g.s.Addr())
	resp = g.fetch(req)
	if resp.ThrottleMillis != 0 || len(resp.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Fatalf("after the quota is removed: throttle %d, records %d", resp.ThrottleMillis, len(resp.Topics[0].Partitions[0].RecordBatches))
	}
}

func createTopicReq(version int16, name string, parts int32) *kmsg.CreateTopicsRequest {
	r := kmsg.NewPtrCreateTopicsRequest()
	r.Version, r.TimeoutMillis = version, 5000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, parts, 1
	r.Topics = append(r.Topics, t)
	return r
}

// controller_mutation_rate (KIP-599): a bucket of rate × 11 s of
// partitions; a creation that takes it into debt is admitted and
// throttled until the debt is repaid; while in debt a strict request
// (CreateTopics v6+) is refused THROTTLING_QUOTA_EXCEEDED, a permissive
// one (v5) admitted and throttled. The debt is the user's, whatever the
// connection.
func TestMutationQuota(t *testing.T) {
	// 0.1 partitions per second: a burst of 1.1.
	st := quotaStoreWith(t, quota.Component{Type: quota.TypeUser}, quota.ControllerMutationRate, 0.1)
	g := newSessionRig(t, Config{Quotas: st}, nil)
	first := ask(g.c, createTopicReq(7, "m1", 3)).(*kmsg.CreateTopicsResponse)
	// 1.1 - 3 = -1.9 partitions: 19 s to repay at 0.1/s.
	if first.Topics[0].ErrorCode != 0 || first.ThrottleMillis < 18_000 || first.ThrottleMillis > 19_000 {
		t.Fatalf("first creation: code %d throttle %d, want created, throttled 19 s", first.Topics[0].ErrorCode, first.ThrottleMillis)
	}
	strict := ask(dialRaw(t, g.s.Addr()), createTopicReq(7, "m2", 1)).(*kmsg.CreateTopicsResponse)
	if strict.Topics[0].ErrorCode != kerr.ThrottlingQuotaExceeded.Code || strict.ThrottleMillis <= 0 {
		t.Fatalf("strict creation in debt: code %d throttle %d, want THROTTLING_QUOTA_EXCEEDED", strict.Topics[0].ErrorCode, strict.ThrottleMillis)
	}
	if _, ok := g.s.res.Topic("m2"); ok {
		t.Fatal("a refused topic was created")
	}
	loose := ask(dialRaw(t, g.s.Addr()), createTopicReq(5, "m3", 1)).(*kmsg.CreateTopicsResponse)
	if loose.Topics[0].ErrorCode != 0 || loose.ThrottleMillis < first.ThrottleMillis {
		t.Fatalf("permissive creation in debt: code %d throttle %d, want created and throttled longer than %d", loose.Topics[0].ErrorCode, loose.ThrottleMillis, first.ThrottleMillis)
	}
}

// answers says whether a new connection is served: an ApiVersions
// answered, not a closed connection.
func answers(t *testing.T, addr net.Addr) (*rawConn, bool) {
	t.Helper()
	c := dialRaw(t, addr)
	c.send(1, kmsg.NewPtrApiVersionsRequest())
	var size [4]byte
	_, err := io.ReadFull(c.nc, size[:])
	if err != nil {
		return c, false
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err = io.ReadFull(c.nc, body)
	return c, err == nil
}

// max.connections.per.ip bounds one address's open connections, and its
// overrides replace the bound for theirs (0: none at all).
func TestMaxConnectionsPerIP(t *testing.T) {
	s := startServer(t, Config{MaxConnectionsPerIP: 2})
	first, ok1 := answers(t, s.Addr())
	_, ok2 := answers(t, s.Addr())
	if _, ok3 := answers(t, s.Addr()); !ok1 || !ok2 || ok3 {
		t.Fatalf("connections served: %v %v %v, want the third refused", ok1, ok2, ok3)
	}
	first.nc.Close()
	waitFor(t, "the closed connection to be counted out", func() bool {
		return s.open.OpenFrom("127.0.0.1") < 2
	})
	if _, ok := answers(t, s.Addr()); !ok {
		t.Fatal("a connection within the bound again was refused")
	}
	none := startServer(t, Config{MaxConnectionsPerIPOverrides: map[string]int{"127.0.0.1": 0}})
	if _, ok := answers(t, none.Addr()); ok {
		t.Fatal("an address overridden to 0 connections was served")
	}
}

// connection_creation_rate (KIP-612): past an address's rate a new
// connection is held unread and closed; one within it is served.
func TestConnectionCreationRate(t *testing.T) {
	// One connection per second, measured over at least 10 s: the 11th
	// connection at once is over it.
	st := quotaStoreWith(t, quota.Component{Type: quota.TypeIP}, quota.ConnectionCreationRate, 1)
	s := startServer(t, Config{Quotas: st})
	for i := range 10 {
		if _, ok := answers(t, s.Addr()); !ok {
			t.Fatalf("connection %d within the rate refused", i+1)
		}
	}
	if _, ok := answers(t, s.Addr()); ok {
		t.Fatal("the 11th connection within a second was served")
	}
	other := startServer(t, Config{})
	if _, ok := answers(t, other.Addr()); !ok {
		t.Fatal("a server without the quota refused a connection")
	}
}

// A user's quota applies to the connections that authenticated as that
// user (the principal's name), and to no other user's.
func TestUserQuotaFollowsPrincipal(t *testing.T) {
	// A request_percentage no request stays within: every answer is
	// throttled, by one window at most.
	st := quotaStoreWith(t, quota.Component{Type: quota.TypeUser, Name: sp("alice")}, quota.RequestPercentage, 1e-9)
	_, addr := saslServer(t, Config{Quotas: st})
	for _, u := range []struct {
		name     string
		throttle int32
	}{{"alice", 1000}, {"bob", 0}} {
		c := dialRaw(t, addr)
		if resp := c.scramLogin(u.name, u.name+"-pw"); resp.ErrorCode != 0 {
			t.Fatalf("login %s: %v", u.name, kerr.ErrorForCode(resp.ErrorCode))
		}
		resp := c.describeQuotas(50, describeQuotasReq(false))
		if resp.ThrottleMillis != u.throttle {
			t.Fatalf("%s: throttle_time_ms %d, want %d", u.name, resp.ThrottleMillis, u.throttle)
		}
	}
}
