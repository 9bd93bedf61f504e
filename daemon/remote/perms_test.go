package remote_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/remote"
)

var update = flag.Bool("update", false, "rewrite examples/distributed/users.conf")

// usersConfText is examples/distributed/users.conf: the users of the
// deployment example with exactly the permissions of their roles for the
// prefix "taskd".
func usersConfText() string {
	var b strings.Builder
	b.WriteString(`# The NATS users of taskd, for nats.prefix "taskd": the coordinator and its
# workers, each with exactly the permissions its role needs
# (docs/distributed.md, "Permissions"). nats-server reads the passwords
# from its environment. Generated: go test ./daemon/remote -run TestUsersConf -update
authorization {
  users = [
    {
      user: coordinator
      password: $TASKD_COORDINATOR_PASSWORD
`)
	b.WriteString(remote.CoordinatorPermissions("taskd").Block("      "))
	b.WriteString(`    }
    {
      user: worker
      password: $TASKD_WORKER_PASSWORD
`)
	b.WriteString(remote.WorkerPermissions("taskd").Block("      "))
	b.WriteString("    }\n  ]\n}\n")
	return b.String()
}

// Ensure examples/distributed/users.conf grants each role exactly the
// permissions the code says it needs.
func TestUsersConf(t *testing.T) {
	const path = "../../examples/distributed/users.conf"
	want := usersConfText()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is not the permissions of the code; run go test ./daemon/remote -run TestUsersConf -update\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// Ensure docs/distributed.md gives each role's permissions for any prefix
// as the code needs them.
func TestPermissionsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/distributed.md")
	if err != nil {
		t.Fatal(err)
	}
	for role, ps := range map[string]remote.Permissions{"coordinator": remote.CoordinatorPermissions("<p>"), "worker": remote.WorkerPermissions("<p>")} {
		if block := ps.Block(""); !strings.Contains(string(doc), "```\n"+block+"```") {
			t.Errorf("docs/distributed.md does not give the %s's permissions as the code needs them:\n%s", role, block)
		}
	}
}
