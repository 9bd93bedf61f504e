package remote_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/internal/natstest"
)

// Ensure a permission the server denies is named for what it is: with a
// users.conf whose coordinator may not publish work and whose worker may
// not list the work consumers, the waiting task says "permission denied"
// and the subject, and so does the worker's log — not a bare "context
// deadline exceeded".
func TestRemote_DeniedPermissionIsNamed(t *testing.T) {
	t.Parallel()
	users, err := os.ReadFile(usersConf(t))
	if err != nil {
		t.Fatal(err)
	}
	conf := strings.Replace(string(users), `"taskd.work.>",`, "", 1)
	conf = strings.Replace(conf, `"$JS.API.CONSUMER.NAMES.TASKD_WORK",`, "", 1)
	srv := natstest.StartProcess(t, conf, "TASKD_COORDINATOR_PASSWORD="+coordinatorPassword, "TASKD_WORKER_PASSWORD="+workerPassword)
	c := newClusterOn(t, srv, []string{"l"}, nil, nil)
	c.deniedOK = true
	w := c.worker("w1", "--profiles", "exec")
	c.drop("l", "1", execTask("true", t.TempDir(), nil))
	c.waitFor("the task to say the server denies the coordinator a permission", time.Minute, func() bool {
		tf := c.read("l", "1")
		s, _ := tf.Metadata.Object("taskd").String("dispatch")
		return strings.Contains(s, "permission denied") && strings.Contains(s, "taskd.work.exec")
	})
	c.waitFor("the worker to log the permission it lacks", time.Minute, func() bool {
		out := w.out.String()
		return strings.Contains(out, "permission denied") && strings.Contains(out, "$JS.API.CONSUMER.NAMES.TASKD_WORK")
	})
	status, _ := c.taskdIn("status", "--root", c.root)
	if !strings.Contains(status, "permission denied") {
		t.Errorf("taskd status does not say the permission is denied:\n%s", status)
	}
}
