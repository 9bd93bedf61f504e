package remote

import (
	"fmt"
	"strings"
)

// Permissions are the subjects a role may publish to and subscribe to on
// the NATS server: exactly what it needs (docs/distributed.md lists them,
// and examples/distributed/users.conf is them for the prefix "taskd").
type Permissions struct {
	Publish   []string
	Subscribe []string
}

// CoordinatorPermissions are the coordinator's, for prefix p: it makes
// and keeps the streams, the bucket and the work consumers, publishes
// attempts and cancels, holds the lock, reads the workers' heartbeats and
// follows the runs. taskd workers needs the same.
func CoordinatorPermissions(p string) Permissions {
	work, runs, pool := workStream(p), runsStream(p), "KV_"+poolBucket(p)
	var pub []string
	pub = append(pub, p+".work.>", p+".run.*."+KindCancel, "$KV."+poolBucket(p)+"."+lockKey)
	for _, s := range []string{work, runs, pool} {
		pub = append(pub,
			"$JS.API.STREAM.INFO."+s, "$JS.API.STREAM.CREATE."+s, "$JS.API.STREAM.UPDATE."+s,
			"$JS.API.DIRECT.GET."+s+".>")
	}
	pub = append(pub,
		"$JS.API.STREAM.PURGE."+runs,
		"$JS.API.STREAM.MSG.DELETE."+work,
		"$JS.API.CONSUMER.CREATE."+work+".>", "$JS.API.CONSUMER.INFO."+work+".*")
	for _, s := range []string{runs, pool} { // ordered consumers
		pub = append(pub,
			"$JS.API.CONSUMER.CREATE."+s+".>", "$JS.API.CONSUMER.INFO."+s+".*",
			"$JS.API.CONSUMER.MSG.NEXT."+s+".*", "$JS.API.CONSUMER.DELETE."+s+".*")
	}
	return Permissions{
		Publish:   pub,
		Subscribe: []string{CoordinatorInbox(p) + ".>", p + ".run.*." + KindEnd},
	}
}

// WorkerPermissions are a worker's, for prefix p: it binds to and pulls
// from the work consumers, acknowledges what it takes, reads the claims
// and cancels of attempts by id, publishes its attempts' claims, output
// and ends and its heartbeat, and hears cancels. Nothing of it makes,
// changes or deletes a stream or a consumer, publishes work, or reads
// another attempt's output or end.
func WorkerPermissions(p string) Permissions {
	work, runs := workStream(p), runsStream(p)
	return Permissions{
		Publish: []string{
			"$JS.API.CONSUMER.NAMES." + work,
			"$JS.API.CONSUMER.INFO." + work + ".*",
			"$JS.API.CONSUMER.MSG.NEXT." + work + ".*",
			"$JS.ACK." + work + ".>",
			"$JS.API.DIRECT.GET." + runs + "." + p + ".run.*." + KindStart,
			"$JS.API.DIRECT.GET." + runs + "." + p + ".run.*." + KindCancel,
			p + ".run.*." + KindStart, p + ".run.*." + KindStarted, p + ".run.*." + KindOut,
			p + ".run.*." + KindErr, p + ".run.*." + KindEnd,
			"$KV." + poolBucket(p) + ".workers.*",
		},
		Subscribe: []string{"_INBOX." + p + ".worker.>", p + ".run.*." + KindCancel},
	}
}

// Block renders the permissions as a nats-server configuration block,
// indented by indent.
func (ps Permissions) Block(indent string) string {
	var b strings.Builder
	list := func(name string, subjects []string) {
		fmt.Fprintf(&b, "%s%s: [\n", indent+"  ", name)
		for i, s := range subjects {
			sep := ","
			if i == len(subjects)-1 {
				sep = ""
			}
			fmt.Fprintf(&b, "%s%q%s\n", indent+"    ", s, sep)
		}
		fmt.Fprintf(&b, "%s]\n", indent+"  ")
	}
	b.WriteString(indent + "permissions: {\n")
	list("publish", ps.Publish)
	list("subscribe", ps.Subscribe)
	b.WriteString(indent + "}\n")
	return b.String()
}
