//go:build !stress

package remote_test

import "time"

// faultTasks is how many exec tasks the fault scenario runs by default;
// go test -tags stress runs the full 200.
const faultTasks = 40

// outage is how long the outage scenario keeps the server down: longer
// than the cluster's ack wait (2s) and its lostAfter (5s); go test -tags
// stress keeps it down for a minute.
const outage = 10 * time.Second
