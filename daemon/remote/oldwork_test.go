package remote_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/daemon/task"
)

// Ensure an attempt the coordinator sent more than a week ago — it was
// away that long, and the server lost the attempt meanwhile — runs when
// it publishes it again from its run folder: signed again, sent now, not
// refused by every worker as too old and published again for ever.
func TestRemote_AttemptSentLongAgoIsSignedAgain(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := newClusterOn(t, srv, []string{"l"}, nil, nil)
	work := t.TempDir()
	c.drop("l", "1", execTask(`echo "$TASKD_TASK_ID $TASKD_ATTEMPT" >> ran; echo '{"success": true}'`, work, nil))
	cmdPath := filepath.Join(c.listDir("l"), ".taskd", "runs", "1", "1", "cmd.json")
	c.waitFor("the attempt to be published", 30*time.Second, func() bool {
		id, _ := remoteOf(filepath.Dir(cmdPath))
		return id != ""
	})
	c.kill(c.coord)

	// The copy the run folder keeps, as if sent eight days ago.
	var cmd map[string]any
	data, err := os.ReadFile(cmdPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &cmd); err != nil {
		t.Fatal(err)
	}
	rem := cmd["remote"].(map[string]any)
	kept, _ := json.Marshal(rem["work"])
	var saved struct {
		Subject string      `json:"subject"`
		Header  nats.Header `json:"header"`
		Data    []byte      `json:"data"`
	}
	if err := json.Unmarshal(kept, &saved); err != nil {
		t.Fatal(err)
	}
	var wk map[string]any
	if err := json.Unmarshal(saved.Data, &wk); err != nil {
		t.Fatal(err)
	}
	wk["sent"] = time.Now().Add(-8 * 24 * time.Hour).UTC().Format(time.RFC3339Nano)
	m := &nats.Msg{Subject: saved.Subject}
	m.Data, _ = json.Marshal(wk)
	signer, err := remote.LoadSigner(filepath.Join(c.dir, "keys", "coordinator.nk"))
	if err != nil {
		t.Fatal(err)
	}
	signer.Sign(m)
	rem["work"] = map[string]any{"subject": m.Subject, "header": m.Header, "data": m.Data}
	if data, err = json.Marshal(cmd); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cmdPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	srv.Wipe()
	srv.Restart()

	c.restart(c.coord)
	w1 := c.worker("w1", "--profiles", "exec")
	c.waitState("l", []string{"1"}, task.Succeeded, time.Minute)
	if n := checkRanOnce(t, filepath.Join(work, "ran")); n != 1 {
		t.Errorf("%d attempts ran, want 1", n)
	}
	if strings.Contains(w1.out.String(), "refusing an attempt") {
		t.Errorf("w1 refused the attempt:\n%s", w1.out)
	}
}
