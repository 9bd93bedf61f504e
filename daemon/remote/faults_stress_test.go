//go:build stress

package remote_test

import "time"

// faultTasks is how many exec tasks the fault scenario runs under the
// stress tag.
const faultTasks = 200

// outage is how long the outage scenario keeps the server down under the
// stress tag.
const outage = 60 * time.Second
