package group

import "github.com/kgateway/kgateway/kafka/clock"

// Clock is the coordinator's time source (kafka/clock): tests inject a
// fake one to drive session and rebalance timeouts without sleeping.
type Clock = clock.Clock

// Timer is a stoppable pending call.
type Timer = clock.Timer
