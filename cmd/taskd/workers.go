package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/remote"
)

func init() {
	register(&command{
		name:  "workers",
		usage: "[--config FILE] [--nats URL] [--json]",
		short: "list the workers a coordinator sees",
		group: "Daemon",
		long: `
Workers lists the taskd workers of the coordinator's NATS server and
prefix, from the heartbeats they publish: each one's name, host, version,
the profiles it serves and its labels, its slots in use, when its last
heartbeat arrived, its state, and the attempts it holds (list/task#attempt
and whether the agent is being prepared, runs, or its end is being sent).
A worker's state is "serving", "draining" (taskd worker --drain, or
SIGTERM: it finishes what it runs and takes nothing new), "stopped",
"silent" (no heartbeat for three of its intervals: its attempts are
recorded lost after nats.lostAfter), or "untrusted" (its key is not in
nats.workerKeys: the coordinator ignores what it reports). The first
line names the coordinator that holds the prefix.

It reads the nats section of --config FILE (default: the daemon's
configuration file) and logs in as the coordinator does; --nats overrides
the url. --json prints the same as a JSON object. It fails (status 1) when
the server cannot be reached or refuses.
`,
		run: runWorkers,
	})
}

func runWorkers(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	configFile := fs.String("config", "", "configuration file")
	url := fs.String("nats", "", "NATS server URL")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return inv.usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	path, optional := *configFile, *configFile == ""
	if optional {
		path = config.DefaultConfigPath()
	}
	fc, err := config.LoadFileConfig(path, optional)
	if err != nil {
		return err
	}
	n := fc.NATS
	if n == nil {
		n = &config.NATS{}
	}
	if *url == "" {
		*url = n.URL
	}
	if *url == "" {
		return inv.usageErrorf("no NATS server: give --nats URL, or a nats url in the configuration file")
	}
	trust, err := remote.NewTrust("nats.workerKeys", n.WorkerKeys)
	if err != nil {
		return err
	}
	home, _ := os.UserHomeDir()
	nc, err := remote.Connect(remote.Dial{URL: *url, NATS: n, Name: "taskd workers", Inbox: remote.CoordinatorInbox(n.PrefixOr()), Home: home, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer nc.Close()
	if !nc.IsConnected() {
		return fmt.Errorf("the NATS server at %s cannot be reached", *url)
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	view, err := remote.ReadPool(ctx, nc, n.PrefixOr(), trust)
	if err != nil {
		return fmt.Errorf("read the workers: %w", err)
	}
	slices.SortFunc(view.Workers, func(a, b remote.WorkerInfo) int { return strings.Compare(a.Heartbeat.Name, b.Heartbeat.Name) })
	if *asJSON {
		enc := json.NewEncoder(inv.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(view)
	}
	printPool(inv.stdout, view, time.Now())
	return nil
}

// printPool prints view as a table, ages relative to the server's clock
// when it was read, else to now: the server's timestamps are of its own
// clock, which may be off from this machine's.
func printPool(w io.Writer, view *remote.PoolView, now time.Time) {
	if !view.ServerTime.IsZero() {
		now = view.ServerTime
	}
	if l := view.Coordinator; l != nil {
		fmt.Fprintf(w, "coordinator: %s, renewed %s\n", clean(l.String()), ago(now, view.LockStored))
	} else {
		fmt.Fprintln(w, "coordinator: none holds this prefix")
	}
	if len(view.Workers) == 0 {
		fmt.Fprintln(w, "no worker has published a heartbeat")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tHOST\tVERSION\tPROFILES\tLABELS\tSLOTS\tHEARTBEAT\tSTATE\tATTEMPTS")
	for _, wi := range view.Workers {
		hb := wi.Heartbeat
		var attempts []string
		for _, a := range hb.Attempts {
			attempts = append(attempts, fmt.Sprintf("%s/%s#%d %s", a.List, a.Task, a.N, a.State))
		}
		labels := strings.Join(hb.Labels, ",")
		if labels == "" {
			labels = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", clean(hb.Name), clean(hb.Host), clean(hb.Version),
			clean(strings.Join(hb.Profiles, ",")), clean(labels), len(hb.Attempts), hb.Slots, ago(now, wi.Stored),
			workerState(wi, now), clean(strings.Join(attempts, ", ")))
	}
	tw.Flush()
}

// workerState is what taskd workers says of a worker's state.
func workerState(wi remote.WorkerInfo, now time.Time) string {
	hb := wi.Heartbeat
	interval := time.Duration(hb.Interval)
	switch {
	case !wi.Trusted:
		return "untrusted"
	case hb.Stopped:
		return "stopped"
	case interval > 0 && now.Sub(wi.Stored) > 3*interval:
		return "silent"
	case hb.Draining:
		return "draining"
	}
	return "serving"
}

// ago says how long ago t was, as status says it.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return age(now, t) + " ago"
}
