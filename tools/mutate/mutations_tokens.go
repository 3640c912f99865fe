package main

// Deliberate breaks of the delegation tokens (kafka/token, KIP-48), in a
// file of their own.

func init() { mutations = append(mutations, tokenMutations...) }

var tokenMutations = []mutation{
	{
		Name: "token-credential-without-hmac",
		Rule: "kafka/token: a token authenticates with its HMAC in base64 as the SCRAM password, as Kafka's DelegationTokenCache (here: the token id, which describing tokens and logs show, is the password)",
		Edits: []edit{{File: "kafka/token/manager.go",
			Old: "\tpw := base64.StdEncoding.EncodeToString(HMAC(id, m.cfg.Secret))\n",
			New: "\tpw := id\n"}},
		Tests: []testRun{
			{Pkg: "./kafka/token/", Run: "TestCredentialIsTheHMACs"},
			{Pkg: "./server/", Run: "TestDelegationTokenAuthentication"},
		},
	},
}
