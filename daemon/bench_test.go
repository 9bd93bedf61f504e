package daemon_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
)

// BenchmarkDaemonThroughput runs b.N exec tasks of `true` through an
// in-process daemon with two workers, every state change fsynced. The
// end-to-end figures against peers come from bench/throughput; this one is
// for profiling (go test -bench DaemonThroughput -cpuprofile …).
func BenchmarkDaemonThroughput(b *testing.B) {
	h := startDaemonB(b, func(fc *config.FileConfig) { fc.Concurrency = 2 })
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		h.drop("bench", fmt.Sprint(i), fmt.Sprintf(`{"id": "%d", "subject": "b", "description": "", "activeForm": "b", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"agent": "exec", "prompt": "true"}}}`, i))
	}
	h.waitFor("all tasks", 5*time.Minute, func() bool {
		evs, _ := eventlog.Read(h.listDir("bench"))
		return countEvents(evs, eventlog.TaskSucceeded, "") >= b.N
	})
}
