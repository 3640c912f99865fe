package kafka

import (
	"fmt"

	"github.com/kgateway/kgateway/kafka/routing"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// api is one row of the table that drives both dispatch and ApiVersions:
// a key is advertised with exactly the versions it is handled at.
type api struct {
	key      int16
	min, max int16
	// handle answers one request. A nil response sends nothing (acks=0);
	// a Go error closes the connection (a Go error closes the connection).
	handle func(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error)
}

const (
	apiKeyProduce     int16 = 0
	apiKeyApiVersions int16 = 18
)

// apis lists every implemented API. Add a row (and a file named by key)
// to implement another; ApiVersions follows automatically.
var apis = []api{
	// Produce 0-2 are advertised but answered UNSUPPORTED_VERSION, as
	// Kafka 4 does (KAFKA-18659): librdkafka stops compressing when a
	// broker's minimum Produce version is above 0 (00_produce.go).
	{key: 0, min: 0, max: 13, handle: handleProduce},
	{key: 1, min: 4, max: 18, handle: handleFetch},
	{key: 2, min: 1, max: 11, handle: handleListOffsets},
	{key: 3, min: 0, max: 13, handle: handleMetadata},
	{key: 8, min: 0, max: 10, handle: handleOffsetCommit},
	{key: 9, min: 0, max: 10, handle: handleOffsetFetch},
	{key: 10, min: 0, max: 6, handle: handleFindCoordinator},
	{key: 11, min: 0, max: 9, handle: handleJoinGroup},
	{key: 12, min: 0, max: 4, handle: handleHeartbeat},
	{key: 13, min: 0, max: 5, handle: handleLeaveGroup},
	{key: 14, min: 0, max: 5, handle: handleSyncGroup},
	{key: 15, min: 0, max: 6, handle: handleDescribeGroups},
	{key: 16, min: 0, max: 5, handle: handleListGroups},
	{key: 17, min: 0, max: 1, handle: handleSaslHandshake},
	{key: 18, min: 0, max: 5, handle: handleApiVersions},
	{key: 19, min: 0, max: 7, handle: handleCreateTopics},
	{key: 20, min: 0, max: 6, handle: handleDeleteTopics},
	{key: 21, min: 0, max: 2, handle: handleDeleteRecords},
	{key: 22, min: 0, max: 5, handle: handleInitProducerID},
	{key: 23, min: 0, max: 4, handle: handleOffsetForLeaderEpoch},
	{key: 24, min: 0, max: 5, handle: handleAddPartitionsToTxn},
	{key: 25, min: 0, max: 4, handle: handleAddOffsetsToTxn},
	{key: 26, min: 0, max: 5, handle: handleEndTxn},
	{key: 27, min: 1, max: 2, handle: handleWriteTxnMarkers},
	{key: 28, min: 0, max: 6, handle: handleTxnOffsetCommit},
	{key: 29, min: 1, max: 3, handle: handleDescribeAcls},
	{key: 30, min: 1, max: 3, handle: handleCreateAcls},
	{key: 31, min: 1, max: 3, handle: handleDeleteAcls},
	{key: 32, min: 0, max: 4, handle: handleDescribeConfigs},
	{key: 33, min: 0, max: 2, handle: handleAlterConfigs},
	{key: 34, min: 1, max: 2, handle: handleAlterReplicaLogDirs},
	{key: 35, min: 1, max: 5, handle: handleDescribeLogDirs},
	{key: 36, min: 0, max: 2, handle: handleSaslAuthenticate},
	{key: 37, min: 0, max: 3, handle: handleCreatePartitions},
	{key: 38, min: 1, max: 3, handle: handleDelegationToken},
	{key: 39, min: 1, max: 2, handle: handleDelegationToken},
	{key: 40, min: 1, max: 2, handle: handleDelegationToken},
	{key: 41, min: 1, max: 3, handle: handleDelegationToken},
	{key: 42, min: 0, max: 3, handle: handleDeleteGroups},
	{key: 43, min: 0, max: 2, handle: handleElectLeaders},
	{key: 44, min: 0, max: 1, handle: handleIncrementalAlterConfigs},
	{key: 45, min: 0, max: 1, handle: handleAlterPartitionReassignments},
	{key: 46, min: 0, max: 0, handle: handleListPartitionReassignments},
	{key: 47, min: 0, max: 0, handle: handleOffsetDelete},
	{key: 48, min: 0, max: 1, handle: handleDescribeClientQuotas},
	{key: 49, min: 0, max: 1, handle: handleAlterClientQuotas},
	{key: 50, min: 0, max: 0, handle: handleDescribeUserScramCredentials},
	{key: 51, min: 0, max: 0, handle: handleAlterUserScramCredentials},
	{key: 57, min: 0, max: 2, handle: handleUpdateFeatures},
	{key: 60, min: 0, max: 2, handle: handleDescribeCluster},
	{key: 61, min: 0, max: 0, handle: handleDescribeProducers},
	{key: 65, min: 0, max: 0, handle: handleDescribeTransactions},
	{key: 66, min: 0, max: 2, handle: handleListTransactions},
	{key: 68, min: 0, max: 1, handle: handleConsumerGroupHeartbeat},
	{key: 69, min: 0, max: 1, handle: handleConsumerGroupDescribe},
	{key: 71, min: 0, max: 0, handle: handleGetTelemetrySubscriptions},
	{key: 72, min: 0, max: 0, handle: handlePushTelemetry},
	{key: 74, min: 0, max: 1, handle: handleListConfigResources},
	{key: 75, min: 0, max: 0, handle: handleDescribeTopicPartitions},
	{key: 76, min: 1, max: 1, handle: handleShareGroupHeartbeat},
	{key: 77, min: 1, max: 1, handle: handleShareGroupDescribe},
	{key: 78, min: 1, max: 2, handle: handleShareFetch},
	{key: 79, min: 1, max: 2, handle: handleShareAcknowledge},
	{key: 88, min: 0, max: 1, handle: handleStreamsGroupHeartbeat},
	{key: 89, min: 0, max: 1, handle: handleStreamsGroupDescribe},
	{key: 90, min: 0, max: 1, handle: handleDescribeShareGroupOffsets},
	{key: 91, min: 0, max: 0, handle: handleAlterShareGroupOffsets},
	{key: 92, min: 0, max: 0, handle: handleDeleteShareGroupOffsets},
	{key: 93, min: 0, max: 0, handle: handleStreamsGroupTopologyDescriptionUpdate},
}

// apiIndex maps a key to its row and advertised lists the rows for
// ApiVersions, advertisedInCluster those served in cluster mode
// (routing.go, no share groups without States); all are built from apis in init (a variable
// initializer would be a cycle: apis -> handleApiVersions -> apis).
var (
	apiIndex            map[int16]api
	advertised          []kmsg.ApiVersionsResponseApiKey
	advertisedInCluster []kmsg.ApiVersionsResponseApiKey
)

func init() {
	apiIndex = make(map[int16]api, len(apis))
	for _, a := range apis {
		if _, dup := apiIndex[a.key]; dup || a.min > a.max || a.handle == nil {
			panic(fmt.Sprintf("kafka: bad apis row for key %d", a.key))
		}
		apiIndex[a.key] = a
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.key, a.min, a.max
		advertised = append(advertised, k)
		if !routing.NotInCluster(a.key) {
			advertisedInCluster = append(advertisedInCluster, k)
		}
	}
}

func lookupAPI(key int16) (api, bool) {
	a, ok := apiIndex[key]
	return a, ok
}
