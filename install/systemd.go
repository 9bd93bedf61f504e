package install

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kardianos/service"
)

// systemdTemplate is taskd's own unit, in kardianos/service v1.3.0's
// template syntax. It replaces kardianos's built-in unit, which is made for
// system services (WantedBy=multi-user.target, a target the user manager
// does not have, so the unit would never start at login) and restarts after
// two minutes. ExecStart's arguments are escaped for systemd beforehand
// (see systemdArg); the binary's path goes through kardianos's cmdEscape.
const systemdTemplate = `# taskd's user service, written by 'taskd install'. Installing again
# replaces this file: put local settings (environment variables, for
# example) in a drop-in instead: systemctl --user edit {{Name}}
[Unit]
Description={{Description}}
Documentation=https://github.com/taskd/taskd/blob/main/docs/service.md

[Service]
ExecStart={{Path | cmdEscape}}{{range Arguments}} {{.}}{{end}}
Restart=on-failure
RestartSec=5
# SIGTERM goes to taskd alone, which stops its agents itself and records
# how they ended; what is still running after TimeoutStopSec is killed.
KillMode=mixed
# Its own cgroup subtree: each attempt of an agent runs in a cgroup of
# its own, so that everything the agent starts is killed with it.
Delegate=yes

[Install]
WantedBy=default.target
`

// systemdFuncs are kardianos's pipeline functions for systemd templates.
var systemdFuncs = tmplFuncs{
	"cmd":       func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` },
	"cmdEscape": func(s string) string { return strings.ReplaceAll(s, " ", `\x20`) },
}

// systemdUnit is a systemd --user unit in ~/.config/systemd/user, the
// directory kardianos writes to (it ignores XDG_CONFIG_HOME).
type systemdUnit struct {
	host
	name string // the unit's name without ".service"
}

var _ platform = (*systemdUnit)(nil)

func (u *systemdUnit) system() string { return "linux-systemd" }
func (u *systemdUnit) kind() string   { return "unit" }
func (u *systemdUnit) unit() string   { return u.name + ".service" }

func (u *systemdUnit) file() string {
	return filepath.Join(u.home, ".config", "systemd", "user", u.unit())
}

func (u *systemdUnit) config(sp spec) (*service.Config, error) {
	// cmdEscape only escapes spaces; anything else systemd would interpret
	// in the binary's path is refused rather than mangled.
	if strings.ContainsAny(sp.exe, "\"'\\$%;") {
		return nil, fmt.Errorf("the taskd binary's path %q has characters a systemd unit cannot hold as they are ('\"\\$%%;); put the binary in a plain directory, e.g. with go install", sp.exe)
	}
	var args []string
	for _, a := range sp.runArgs() {
		args = append(args, systemdArg(a))
	}
	return &service.Config{
		Name:        u.name,
		Description: "taskd, the file-backed task daemon",
		Executable:  sp.exe,
		Arguments:   args,
		Option: service.KeyValue{
			"UserService":   true,
			"SystemdScript": systemdTemplate,
		},
	}, nil
}

// systemdArg escapes one ExecStart argument: % (specifiers) and $
// (variable expansion) are doubled, and an argument with blanks, quotes,
// backslashes or a semicolon is double-quoted.
func systemdArg(s string) string {
	s = strings.NewReplacer("%", "%%", "$", "$$").Replace(s)
	if s == "" || strings.ContainsAny(s, " \t\"'\\;") {
		s = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
	}
	return s
}

// render mirrors the data kardianos's (*systemd).Install hands the template,
// for a Config with no options but UserService and SystemdScript.
func (u *systemdUnit) render(c *service.Config) (string, error) {
	path, err := filepath.Abs(c.Executable)
	if err != nil {
		return "", err
	}
	data := map[string]tmplValue{
		"Description":       c.Description,
		"Path":              path,
		"Name":              c.Name,
		"Dependencies":      c.Dependencies,
		"Arguments":         c.Arguments,
		"ChRoot":            c.ChRoot,
		"WorkingDirectory":  c.WorkingDirectory,
		"UserName":          c.UserName,
		"ReloadSignal":      "",
		"PIDFile":           "",
		"LogDirectory":      "/var/log",
		"OutputFileSupport": "",
		"LimitNOFILE":       "",
		"Restart":           "always",
		"SuccessExitStatus": "",
		"EnvVars":           []string(nil),
	}
	tmpl, _ := c.Option["SystemdScript"].(string)
	return renderTemplate(tmpl, data, systemdFuncs)
}

// systemctl renders a systemctl command the way kardianos runs it: the
// action first, then --user.
func (u *systemdUnit) systemctl(action string, args ...string) string {
	return ShellLine(append([]string{"systemctl", action, "--user"}, args...)...)
}

func (u *systemdUnit) plan(replace bool) []string {
	var p []string
	if replace {
		p = append(p,
			u.systemctl("stop", u.unit()),
			u.systemctl("disable", u.unit()),
			"# remove "+u.file(),
			u.systemctl("daemon-reload"))
	}
	return append(p,
		"# write "+u.file()+" (shown above)",
		u.systemctl("enable", u.unit()),
		u.systemctl("daemon-reload"),
		u.systemctl("start", u.unit()),
		"# then check lingering: "+ShellLine("loginctl", "show-user", u.user, "-p", "Linger"))
}

func (u *systemdUnit) logs() string { return "journalctl --user -u " + u.name + " -f" }

func (u *systemdUnit) notes() []string {
	return []string{
		"Logs:    " + u.logs(),
		"Status:  taskd service-status (or: systemctl --user status " + u.name + ")",
		"The service does not see your shell's environment. To give it variables",
		"(PATH, ANTHROPIC_API_KEY, ...), add them to a drop-in with",
		"'systemctl --user edit " + u.name + "', then 'systemctl --user restart " + u.name + "'.",
	}
}

func (u *systemdUnit) noManager(ctx context.Context) error {
	none := func(reason, hint string) error {
		return &NoServiceManagerError{Manager: "systemd", Reason: reason, Hint: hint}
	}
	if _, err := u.lookPath("systemctl"); err != nil {
		return none("systemctl is not installed", "")
	}
	if !u.exists("/run/systemd/system") {
		return none("this system was not booted with systemd (as is usual in a container)", "")
	}
	out, err := u.run(ctx, "systemctl", "--user", "is-system-running")
	state, _, _ := strings.Cut(out, "\n")
	switch state {
	case "running", "degraded", "starting", "initializing", "maintenance", "stopping":
		return nil
	}
	why := out
	if why == "" && err != nil {
		why = err.Error()
	}
	return none(fmt.Sprintf("'systemctl --user' cannot reach your systemd user instance (%s)", why),
		fmt.Sprintf("The user instance runs while %s is logged in (or always, with lingering); log in as %s directly rather than with su or sudo, or set XDG_RUNTIME_DIR=/run/user/%d.", u.user, u.user, u.uid))
}

func (u *systemdUnit) prepare() error { return nil }

func (u *systemdUnit) start(ctx context.Context, m manager) error { return m.Start() }
func (u *systemdUnit) stop(ctx context.Context, m manager) error  { return m.Stop() }

func (u *systemdUnit) warnings(ctx context.Context) []string {
	cmd := ShellLine("loginctl", "enable-linger", u.user)
	out, err := u.run(ctx, "loginctl", "show-user", u.user, "-p", "Linger")
	switch {
	case out == "Linger=yes":
		return nil
	case out == "Linger=no", strings.Contains(out, "not logged in or lingering"):
		return []string{
			fmt.Sprintf("lingering is off for %s: systemd stops the service when your last session ends, and starts it again only when you log in, not at boot.", u.user),
			"To keep it running, run: " + cmd,
		}
	case err == nil:
		err = fmt.Errorf("unexpected output %q", out)
	}
	return []string{
		fmt.Sprintf("could not check lingering (%v).", err),
		"If it is off, the service stops when you log out; to keep it running, run: " + cmd,
	}
}
