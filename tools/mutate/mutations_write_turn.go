package main

// Deliberate breaks of a connection's write turn and prompt requests
// (kafka/connection write.go).

func init() {
	mutations = append(mutations,
		mutation{
			Name: "response-written-out-of-turn",
			Rule: "kafka/connection: responses in request order (the write turn writes only the head slot once answered, never an answered one behind it)",
			Edits: []edit{{File: "kafka/connection/write.go",
				Old: "\tselect {\n\tcase <-p[0].done:\n",
				New: "\tif len(p) > 1 {\n\t\tselect {\n\t\tcase <-p[1].done:\n\t\t\tp[0], p[1] = p[1], p[0]\n\t\tdefault:\n\t\t}\n\t}\n\tselect {\n\tcase <-p[0].done:\n"}},
			Tests: []testRun{{Pkg: "./kafka/connection/", Run: "TestResponsesInRequestOrder$"}},
		},
		mutation{
			Name: "prompt-request-keeps-reader",
			Rule: "kafka/connection: a prompt request about to wait long hands the reading on, so the peer's leaving ends its wait",
			Edits: []edit{{File: "kafka/connection/request.go",
				Old: "\tif c := r.reader; c != nil {\n",
				New: "\tif c := r.reader; c != nil && false {\n"}},
			Tests: []testRun{{Pkg: "./kafka/connection/", Run: "TestPromptRequestHandsOffReading$"}},
		},
		mutation{
			Name: "fetch-long-poll-keeps-reader",
			Rule: "kafka: a Fetch runs on its connection's reader and hands the reading on before its long poll, so a client's leaving ends the poll",
			Edits: []edit{{File: "kafka/01_fetch.go",
				Old: "	rc.req.HandOff()",
				New: "	// rc.req.HandOff()"}},
			Tests: []testRun{{Pkg: "./kafka/", Run: "TestLongPollEndsWhenClientCloses$"}},
		},
	)
}
