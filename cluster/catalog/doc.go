// Package catalog is the shared topic catalog of cluster mode: the
// kafka.Catalog of a node, keeping every topic as a record in etcd and
// applying every change of the records to the node's resolver through a
// watch, so that all nodes bind the same topics with the same ids,
// partition counts and configs.
//
// # Keyspace
//
// Under the cluster's prefix (cluster.etcd.prefix):
//
//	<prefix>topics/<name>  {"id": 32 hex digits, "partitions": n,
//	                       "configs": {explicit configs},
//	                       "creator": principal} (JSON; creator omitted
//	                       when unknown)
//	<prefix>topics.configs/brokers/default  the default broker config
//	                       layer (BROKER resource ""), JSON name → value
//	<prefix>topics.configs/brokers/<id>     node id's broker config layer
//	<prefix>topics.configs/internal/<name>  an internal topic's explicit
//	                       configs
//
// # Rules
//
//   - **Etcd as the catalog's truth.** etcd is the truth; the resolver
//     is made to match it. Start reads every record at one revision,
//     applies each (resolver.ApplyTopic: create with the record's id,
//     grow, replace configs; a local topic of the same name with
//     another id is deleted first) and deletes every local topic that
//     has no record. Applying is idempotent, so applying a record
//     again, or a state the resolver already has, changes nothing.
//   - **One id per name.** One name, one topic, one id. A create is a
//     transaction that puts the record only if the key was never
//     created or is deleted (create revision 0); of two nodes creating
//     a name at once exactly one succeeds and the other gets
//     resolver.ErrTopicExists (TOPIC_ALREADY_EXISTS). EnsureTopic
//     (auto-create, per the resolver's auto.create.topics.enable) that
//     loses returns the winner's topic, so racing nodes all return the
//     one id.
//   - **Compare-and-swap changes.** A change of an existing record
//     (partitions, configs) is computed on the resolver once it has
//     applied the record's revision, and put in a transaction that
//     requires the record's mod revision unchanged; a conflict reads
//     and computes again, a few times (ErrConflict after that).
//     Partitions only grow.
//   - **Waiting for the local apply.** A change returns once this
//     node's resolver has applied it (WaitApplied on the change's
//     revision), so a client that changes a topic and then uses it
//     through the same node sees the change. The wait is bounded by the
//     request's timeout (Options.Timeout): past it the change fails
//     with a context.DeadlineExceeded error (REQUEST_TIMED_OUT), as
//     Kafka's does, although it may be made. The applied revision
//     advances only to a revision whose events are all applied, or to a
//     full load's: a watch response's header revision may be ahead of
//     events still to come.
//   - **Catalog watch.** Changes are applied in revision order by one
//     watch that starts after the loaded revision. The client resumes
//     the watch across an etcd restart; when the watch ends anyway
//     (compaction past it, cancellation, an etcd member without a
//     leader: the watch requires one) or an apply fails on storage, the
//     catalog loads everything again (etcd as the catalog's truth) and
//     watches from the new revision.
//   - **Validation before writing.** Every change is validated on the
//     resolver before anything is written, with the resolver's own
//     rules and errors, and validateOnly writes nothing. Cluster mode
//     also refuses remote.storage.enable=true and the compacted view
//     (topicconfig.CompactedView=true): INVALID_CONFIG.
//   - **Internal topics kept local.** Internal topics
//     (resolver.IsInternalTopic, reserved internal topic names) have no
//     record: their creation, deletion and partitions get the resolver's
//     answer, and a stray record of one is ignored. Their configs are
//     kept as the cluster's configs (below).
//   - **Cluster configs in the catalog.** The dynamic configs (package
//     resolver/dynconfig) live under topics.configs/, which sorts just
//     before topics/: the load and the one watch cover the range from
//     one to the end of the other, so config and topic changes apply in
//     revision order and WaitApplied covers both (a key between the two
//     directories is ignored). A load applies the configs before the
//     topics. Every node applies the default broker layer and the one
//     named by its Options.NodeID (resolver.ApplyBrokerLayers, which
//     re-resolves every topic's settings) and keeps the internal topics'
//     configs in memory, which DescribeConfigs reads; a layer's entries
//     that dynconfig refuses are logged and left out, so the layers in
//     effect hold only valid values, the same on every node. A change reads its key, waits until this
//     node applied that revision, edits and checks it with dynconfig's
//     rules on this node, and puts it by compare-and-swap on the key's
//     mod revision (as a topic's), returning once this node applied it.
//   - **Guarded deletion.** A deletion is a transaction guarded by the
//     record's mod revision. The node whose deletion succeeded, and
//     only it, calls Options.OnDelete with the deleted record's id and
//     partition count, after etcd accepted it, so the topic's data
//     elsewhere can go; every node's resolver deletes its local copy
//     when it applies the deletion. A node that stops between the two
//     leaves that data behind, unreferenced.
package catalog
