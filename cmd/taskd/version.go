package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at release time with -ldflags "-X main.version=v1.2.3";
// otherwise it comes from the module version go install recorded.
var version = ""

// shortVersion is the version alone ("v1.2.3", "devel"), as a worker
// reports it in its heartbeat.
func shortVersion() string {
	v := version
	if info, ok := debug.ReadBuildInfo(); ok && v == "" {
		v = info.Main.Version
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	return v
}

func versionString() string {
	v := version
	rev := ""
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = s.Value[:12]
			}
		}
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	if rev != "" {
		v += " " + rev
	}
	return fmt.Sprintf("taskd %s %s/%s %s", v, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

func init() {
	register(&command{
		name:  "version",
		usage: "",
		short: "print the version",
		group: "Other",
		long: `
Version prints taskd's version, the platform and the Go version it was built
with. It takes no arguments, and cannot fail otherwise.
`,
		run: func(ctx context.Context, inv *invocation) error {
			if len(inv.args) > 0 {
				return inv.usageErrorf("takes no arguments")
			}
			fmt.Fprintln(inv.stdout, versionString())
			return nil
		},
	})
}
