package install

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Fixed machines for golden files: no path of a real machine appears in them.
func aliceLinux() host {
	return host{home: "/home/alice", user: "alice", uid: 1000}
}

func aliceMac() host {
	return host{home: "/Users/alice", user: "alice", uid: 501}
}

var renderTests = []struct {
	name string
	sp   spec
}{
	{"default", spec{exe: "/home/alice/go/bin/taskd", root: "/home/alice/.claude/tasks"}},
	{"config", spec{exe: "/home/alice/go/bin/taskd", root: "/srv/tasks", config: "/home/alice/.config/taskd/config.json"}},
	{"quoting", spec{exe: "/home/alice/my tools/taskd", root: "/home/alice/My Tasks/100%", config: `/home/alice/it's "$HOME"/a&b<c>.json`}},
}

// Ensure the unit and the plist for a binary and flags are the golden ones.
func TestRender(t *testing.T) {
	for _, tt := range renderTests {
		for _, p := range []struct {
			plat platform
			ext  string
			home string
		}{
			{&systemdUnit{host: aliceLinux(), name: "taskd"}, "service", "/home/alice"},
			{&launchdAgent{host: aliceMac(), label: launchdLabel}, "plist", "/Users/alice"},
		} {
			t.Run(tt.name+"."+p.ext, func(t *testing.T) {
				c, err := p.plat.config(atHome(tt.sp, p.home))
				if err != nil {
					t.Fatal(err)
				}
				got, err := p.plat.render(c)
				if err != nil {
					t.Fatal(err)
				}
				checkGolden(t, "render/"+tt.name+"."+p.ext, got)
			})
		}
	}
}

// atHome moves sp's paths from /home/alice to home.
func atHome(sp spec, home string) spec {
	r := strings.NewReplacer("/home/alice", home)
	return spec{exe: r.Replace(sp.exe), root: r.Replace(sp.root), config: r.Replace(sp.config)}
}

// Ensure systemd itself reads each unit without a complaint, and finds the
// binary that ExecStart names (escaped with kardianos's cmdEscape). Skips
// without systemd-analyze.
func TestRender_systemdAnalyzeVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed; the units are not checked by systemd")
	}
	for _, tt := range renderTests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			// The binary must exist for verify; give its path a blank too.
			exe := filepath.Join(dir, "my tools", "taskd")
			if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			sp := tt.sp
			sp.exe = exe
			u := &systemdUnit{host: aliceLinux(), name: "taskd"}
			c, err := u.config(sp)
			if err != nil {
				t.Fatal(err)
			}
			text, err := u.render(c)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "taskd.service")
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(analyze, "verify", file).CombinedOutput()
			if err != nil || len(out) > 0 {
				t.Fatalf("systemd-analyze verify: %v\n%s\nunit:\n%s", err, out, text)
			}
		})
	}
}

// Ensure each plist is well-formed XML whose ProgramArguments are the
// binary and run's arguments, unescaped.
func TestRender_launchdPlistArguments(t *testing.T) {
	for _, tt := range renderTests {
		t.Run(tt.name, func(t *testing.T) {
			sp := atHome(tt.sp, "/Users/alice")
			a := &launchdAgent{host: aliceMac(), label: launchdLabel}
			c, err := a.config(sp)
			if err != nil {
				t.Fatal(err)
			}
			text, err := a.render(c)
			if err != nil {
				t.Fatal(err)
			}
			var plist struct {
				Dict struct {
					Items []struct {
						XMLName xml.Name
						Value   string   `xml:",chardata"`
						Strings []string `xml:"string"`
					} `xml:",any"`
				} `xml:"dict"`
			}
			d := xml.NewDecoder(strings.NewReader(text))
			d.Strict = true
			if err := d.Decode(&plist); err != nil {
				t.Fatalf("plist is not well-formed: %v\n%s", err, text)
			}
			var got []string
			items := plist.Dict.Items
			for i := 0; i+1 < len(items); i++ {
				if items[i].XMLName.Local == "key" && items[i].Value == "ProgramArguments" {
					got = items[i+1].Strings
				}
			}
			want := append([]string{sp.exe}, sp.runArgs()...)
			if !slices.Equal(got, want) {
				t.Errorf("ProgramArguments = %q, want %q", got, want)
			}
		})
	}
}

// Ensure the unit has what a user service needs and none of kardianos's
// system-service defaults.
func TestRender_systemdUnit(t *testing.T) {
	u := &systemdUnit{host: aliceLinux(), name: "taskd"}
	c, err := u.config(renderTests[0].sp)
	if err != nil {
		t.Fatal(err)
	}
	if c.UserName != "" || c.Option["UserService"] != true {
		t.Errorf("config: UserName=%q UserService=%v, want empty and true", c.UserName, c.Option["UserService"])
	}
	got, err := u.render(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nWantedBy=default.target\n",
		"\nRestart=on-failure\n",
		"\nRestartSec=5\n",
		"\nExecStart=/home/alice/go/bin/taskd run --root /home/alice/.claude/tasks\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("unit lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"multi-user.target", "User=", "Environment", "RestartSec=120", "StartLimit", "ConditionFileIsExecutable", "StandardOutput"} {
		if strings.Contains(got, bad) {
			t.Errorf("unit has %q:\n%s", bad, got)
		}
	}
}

// Ensure the plist starts at load, is kept alive and logs under
// ~/Library/Logs/taskd.
func TestRender_launchdPlist(t *testing.T) {
	a := &launchdAgent{host: aliceMac(), label: launchdLabel}
	c, err := a.config(renderTests[0].sp)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.render(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<key>RunAtLoad</key>\n\t<true/>",
		"<key>KeepAlive</key>\n\t<true/>",
		"<string>/Users/alice/Library/Logs/taskd/com.github.taskd.taskd.err.log</string>",
		"<string>/Users/alice/Library/Logs/taskd/com.github.taskd.taskd.out.log</string>",
		"<string>/home/alice/go/bin/taskd</string>\n\t\t<string>run</string>\n\t\t<string>--root</string>\n\t\t<string>/home/alice/.claude/tasks</string>\n\t</array>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("plist lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "UserName") || strings.Contains(got, "EnvironmentVariables") {
		t.Errorf("plist sets a user or environment:\n%s", got)
	}
}

// Ensure a binary path systemd cannot carry is refused, not mangled.
func TestRender_systemdRefusesPath(t *testing.T) {
	u := &systemdUnit{host: aliceLinux(), name: "taskd"}
	for _, exe := range []string{`/home/alice/100%/taskd`, `/home/alice/$x/taskd`, `/home/alice/a"b/taskd`, `/home/alice/a\b/taskd`} {
		if _, err := u.config(spec{exe: exe, root: "/r"}); err == nil || !strings.Contains(err.Error(), "cannot hold") {
			t.Errorf("config(exe %q): err = %v, want a refusal", exe, err)
		}
	}
}

var systemdArgTests = []struct{ in, want string }{
	{"run", "run"},
	{"/home/alice/.claude/tasks", "/home/alice/.claude/tasks"},
	{"/a b", `"/a b"`},
	{"100%", "100%%"},
	{"$HOME", "$$HOME"},
	{`a"b`, `"a\"b"`},
	{`a\b`, `"a\\b"`},
	{"a;b", `"a;b"`},
	{"", `""`},
}

func TestSystemdArg(t *testing.T) {
	for _, tt := range systemdArgTests {
		if got := systemdArg(tt.in); got != tt.want {
			t.Errorf("systemdArg(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
