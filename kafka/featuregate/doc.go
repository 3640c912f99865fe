// Package featuregate turns a group protocol off while its feature is
// finalized at 0 (UpdateFeatures), as Kafka 4.4's KafkaApis does:
//
//   - group.version 0: the consumer group protocol (KIP-848),
//     ConsumerGroupHeartbeat and ConsumerGroupDescribe;
//   - share.version 0: share groups (KIP-932), ShareGroupHeartbeat,
//     ShareGroupDescribe, ShareFetch, ShareAcknowledge and the share-group
//     offsets APIs (Describe, Alter, Delete);
//   - streams.version 0: streams groups (KIP-1071), StreamsGroupHeartbeat
//     and StreamsGroupDescribe.
//
// share.version 1 keeps share groups but turns their dead-letter queues
// (KIP-1191, level 2) off: kafka/share asks the level itself (dlqOn).
//
// A gated request is answered UNSUPPORTED_VERSION before it is
// authorized or routed, as Kafka checks the feature first, with the
// error where Kafka puts it: the top-level code, or each named group's
// for the describes and DescribeShareGroupOffsets. The keys stay listed
// in ApiVersions at every level, as Kafka 4.4 lists them, and groups
// already stored are kept: finalizing the feature again serves them.
//
// What it may not touch: the levels (kafka/features keeps them) and the
// handlers (kafka/ calls Refuse before dispatching).
package featuregate
