package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/parallel"
	"github.com/taskd/taskd/taskfile"
)

func init() {
	register(&command{
		name:  "parallel",
		usage: "[--root DIR] [--config FILE] [LIST N | --profile P N | --all N]",
		short: "change how many agents run at once, without a restart",
		group: "Tasks",
		long: `
Parallel changes how many agents may run at once while the daemon runs:
in a list (LIST N), of an agent profile (--profile P N), or in all (--all
N). N is a whole number from 1 to 1024, or default to go back to what the
configuration says (concurrency, lists.<id>.concurrency,
profiles.<name>.concurrency). The number is written to the root's
.taskd-parallel.json, which the daemon watches: it takes effect at once
and outlives a restart; the configuration file is not changed.

A lower number stops no agent: those running finish, and no new one
starts until fewer run than the number. A higher one starts waiting tasks
at once. Without arguments, parallel prints the numbers in force and
where each comes from.

	taskd parallel nightly 1
	taskd parallel --profile claude 2
	taskd parallel --all 8
	taskd parallel nightly default

Parallel fails (status 1) when the file cannot be written, and prints its
usage (status 2) for a number out of range or a list name that cannot be
one.
`,
		run: runParallel,
	})
}

func runParallel(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	configFile := fs.String("config", "", "configuration file")
	profile := fs.String("profile", "", "change the number of this agent profile")
	all := fs.Bool("all", false, "change the number in all")
	if err := inv.parse(fs); err != nil {
		return err
	}
	r, err := daemon.ResolveRoot(*root, os.Getenv)
	if err != nil {
		return err
	}
	args := fs.Args()
	if len(args) == 0 && *profile == "" && !*all {
		return showParallel(inv, r, *root, *configFile)
	}
	var name, what string
	switch {
	case *all && *profile == "" && len(args) == 1:
		what = "all"
	case *profile != "" && !*all && len(args) == 1:
		name, what = *profile, "profile"
	case *profile == "" && !*all && len(args) == 2:
		name, what, args = args[0], "list", args[1:]
		if !taskfile.ValidID(name) {
			return inv.usageErrorf("%q is not a list name (1-128 of A-Z a-z 0-9 _ -)", name)
		}
	default:
		return inv.usageErrorf("give LIST N, --profile P N or --all N")
	}
	n := 0
	if args[0] != "default" {
		if n, err = strconv.Atoi(args[0]); err != nil || n < 1 || n > parallel.Max {
			return inv.usageErrorf("%q is not a number of agents from 1 to %d, or default", args[0], parallel.Max)
		}
	}
	if err := os.MkdirAll(r, 0o700); err != nil {
		return err
	}
	err = parallel.Update(ctx, r, func(rec *parallel.Record) error {
		switch what {
		case "all":
			rec.All = n
		case "list":
			rec.Lists = setLimit(rec.Lists, name, n)
		case "profile":
			rec.Profiles = setLimit(rec.Profiles, name, n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	label := map[string]string{"all": "all", "list": "list " + name, "profile": "profile " + name}[what]
	if n == 0 {
		fmt.Fprintf(inv.stdout, "%s: as the configuration says\n", label)
	} else {
		fmt.Fprintf(inv.stdout, "%s: %d at once\n", label, n)
	}
	warnNoDaemon(inv, r)
	return nil
}

// setLimit sets m[k] to n, or removes it for 0.
func setLimit(m map[string]int, k string, n int) map[string]int {
	if n == 0 {
		delete(m, k)
		return m
	}
	if m == nil {
		m = map[string]int{}
	}
	m[k] = n
	return m
}

// showParallel prints the numbers in force: the parallel file's, else
// the configuration's.
func showParallel(inv *invocation, r, rootFlag, configFile string) error {
	rec, err := parallel.Read(r)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(rootFlag, configFile, nil)
	if err != nil {
		return err
	}
	from := func(set, conf int) string {
		if set > 0 {
			return fmt.Sprintf("%d (taskd parallel; the configuration says %s)", set, confWord(conf))
		}
		return fmt.Sprintf("%s (the configuration)", confWord(conf))
	}
	fmt.Fprintf(inv.stdout, "all: %s\n", from(rec.All, cfg.Concurrency))
	lists := map[string]bool{}
	for id := range rec.Lists {
		lists[id] = true
	}
	for id := range cfg.ListLimits {
		lists[id] = true
	}
	for _, id := range slices.Sorted(maps.Keys(lists)) {
		fmt.Fprintf(inv.stdout, "list %s: %s\n", id, from(rec.Lists[id], cfg.ListLimits[id]))
	}
	profiles := map[string]bool{}
	for name := range rec.Profiles {
		profiles[name] = true
	}
	for name, p := range cfg.Profiles {
		if p.Concurrency > 0 {
			profiles[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(profiles)) {
		conf := 0
		if p := cfg.Profiles[name]; p != nil {
			conf = p.Concurrency
		}
		fmt.Fprintf(inv.stdout, "profile %s: %s\n", name, from(rec.Profiles[name], conf))
	}
	return nil
}

// confWord says a number of the configuration: 0 is no number of its own.
func confWord(n int) string {
	if n == 0 {
		return "none of its own"
	}
	return strconv.Itoa(n)
}
