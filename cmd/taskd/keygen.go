package main

import (
	"context"
	"fmt"

	"github.com/taskd/taskd/daemon/remote"
)

func init() {
	register(&command{
		name:  "keygen",
		usage: "FILE",
		short: "make a signing key for a coordinator or a worker",
		group: "Daemon",
		long: `
Keygen makes an nkey (an ed25519 key) in FILE, readable by its owner only,
and prints its public key. A coordinator signs the attempts it sends with
its key (nats.signingKey) and its workers run only attempts signed by a key
of their nats.coordinatorKeys; a worker signs what it reports with its own,
and the coordinator takes only reports signed by a key of its
nats.workerKeys (docs/distributed.md).

When FILE holds a key already, keygen prints that key's public key and
changes nothing. It fails (status 1) when FILE cannot be written, or holds
something else, or others than its owner may read it.
`,
		run: runKeygen,
	})
}

func runKeygen(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return inv.usageErrorf("want one FILE")
	}
	pub, made, err := remote.Keygen(fs.Arg(0))
	if err != nil {
		return err
	}
	if made {
		fmt.Fprintf(inv.stderr, "made a new key in %s\n", fs.Arg(0))
	}
	fmt.Fprintln(inv.stdout, pub)
	return nil
}
