package main

// Deliberate breaks of the dynamic broker configs (resolver/dynconfig)
// and of their keeping in the cluster's catalog (cluster/catalog "cluster
// configs in the catalog"), in a file of their own.

func init() { mutations = append(mutations, dynconfigMutations...) }

var dynconfigMutations = []mutation{
	{
		Name:  "broker-layers-not-reapplied",
		Rule:  "dynconfig: a dynamic broker config change re-resolves every topic's settings at once (here: the layers change, the partitions keep their settings)",
		Edits: []edit{{File: "resolver/broker_dynamic.go", Old: "\tr.dynBroker.Store(&l)\n\treturn r.reapplySettingsLocked()\n", New: "\tr.dynBroker.Store(&l)\n\treturn nil\n"}},
		Tests: []testRun{
			{Pkg: "./resolver/", Run: "TestDynamicBrokerConfigs"},
			{Pkg: "./server/", Run: "TestClusterBrokerConfigs"},
		},
	},
	{
		Name:  "node-layer-on-every-node",
		Rule:  "cluster configs in the catalog: a node applies the default broker layer and its own, not another node's",
		Edits: []edit{{File: "cluster/catalog/configs.go", Old: `case rest == "brokers/default" || rest == "brokers/"+strconv.Itoa(int(c.opts.NodeID)):`, New: `case strings.HasPrefix(rest, "brokers/") && strconv.IntSize > 0:`}},
		Tests: []testRun{
			{Pkg: "./cluster/catalog/", Run: "TestConfigsApplied"},
			{Pkg: "./server/", Run: "TestClusterBrokerConfigs"},
		},
	},
	{
		Name:  "configs-outside-the-watch",
		Rule:  "cluster configs in the catalog: the catalog's one watch covers the configs with the topics (here: it watches the topics only)",
		Edits: []edit{{File: "cluster/catalog/catalog.go", Old: "c.cfgDir, clientv3.WithRange(c.end()), clientv3.WithRev(rev+1)", New: "c.dir, clientv3.WithPrefix(), clientv3.WithRev(rev+1)"}},
		Tests: []testRun{{Pkg: "./cluster/catalog/", Run: "TestConfigsApplied"}},
	},
}
