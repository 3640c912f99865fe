package main

// Deliberate breaks of the request workers (kafka/connection Workers).

func init() {
	mutations = append(mutations,
		mutation{
			Name: "request-waits-for-a-worker",
			Rule: "kafka/connection workers: a request never waits for a worker (a busy pool starts a new one rather than queue a request behind a running handler)",
			Edits: []edit{{File: "kafka/connection/workers.go",
				Old: "\tw.live.Add(1)\n\tgo w.loop(f)\n",
				New: "\tif w.live.Load() > 0 {\n\t\tfor !w.take(f) {\n\t\t\ttime.Sleep(time.Millisecond)\n\t\t}\n\t\treturn\n\t}\n\tw.live.Add(1)\n\tgo w.loop(f)\n"}},
			Tests: []testRun{{Pkg: "./kafka/connection/", Run: "TestRequestNeverWaitsForWorker"}},
		},
		mutation{
			Name:  "parked-workers-unbounded",
			Rule:  "kafka/connection workers: at most maxParked workers stay parked",
			Edits: []edit{{File: "kafka/connection/workers.go", Old: "\tif len(w.parked) >= w.maxParked {\n", New: "\tif false {\n"}},
			Tests: []testRun{{Pkg: "./kafka/connection/", Run: "TestParkedWorkersBounded$"}},
		},
	)
}
