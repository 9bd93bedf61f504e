package install

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kardianos/service"
)

// launchdLabel is the agent's launchd label and the plist's file name.
const launchdLabel = "com.github.taskd.taskd"

// launchdTemplate is taskd's own launch agent, in kardianos/service
// v1.3.0's template syntax: started at login (RunAtLoad, false in
// kardianos's defaults), restarted whenever it exits (KeepAlive), output
// in ~/Library/Logs/taskd instead of kardianos's default, the home
// directory.
const launchdTemplate = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- taskd's launch agent, written by 'taskd install'. Installing again replaces this file. -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>{{Name | html}}</string>
	<key>ProgramArguments</key>
	<array>
		<string>{{Path | html}}</string>
{{range Arguments}}		<string>{{. | html}}</string>
{{end}}	</array>
	<key>RunAtLoad</key>
	<{{RunAtLoad}}/>
	<key>KeepAlive</key>
	<{{KeepAlive}}/>
	<key>StandardOutPath</key>
	<string>{{StandardOutPath | html}}</string>
	<key>StandardErrorPath</key>
	<string>{{StandardErrorPath | html}}</string>
</dict>
</plist>
`

// launchdFuncs are kardianos's pipeline functions for launchd templates.
var launchdFuncs = tmplFuncs{
	"html": strings.NewReplacer(`&`, "&amp;", `'`, "&#39;", `<`, "&lt;", `>`, "&gt;", `"`, "&#34;").Replace,
}

// launchdAgent is a launchd user agent in ~/Library/LaunchAgents.
type launchdAgent struct {
	host
	label string
}

var _ platform = (*launchdAgent)(nil)

func (a *launchdAgent) system() string { return "darwin-launchd" }
func (a *launchdAgent) kind() string   { return "agent" }

func (a *launchdAgent) file() string {
	return filepath.Join(a.home, "Library", "LaunchAgents", a.label+".plist")
}

func (a *launchdAgent) logDir() string { return filepath.Join(a.home, "Library", "Logs", "taskd") }

// logFile is where kardianos points the agent's output: LogDirectory/Label.out.log and .err.log.
func (a *launchdAgent) logFile(stream string) string {
	return fmt.Sprintf("%s/%s.%s.log", a.logDir(), a.label, stream)
}

func (a *launchdAgent) config(sp spec) (*service.Config, error) {
	return &service.Config{
		Name:        a.label,
		Description: "taskd, the file-backed task daemon",
		Executable:  sp.exe,
		Arguments:   sp.runArgs(),
		Option: service.KeyValue{
			"UserService":   true,
			"LaunchdConfig": launchdTemplate,
			"RunAtLoad":     true,
			"KeepAlive":     true,
			"LogDirectory":  a.logDir(),
		},
	}, nil
}

// render mirrors the data kardianos's (*darwinLaunchdService).Install hands
// the template.
func (a *launchdAgent) render(c *service.Config) (string, error) {
	path, err := filepath.Abs(c.Executable)
	if err != nil {
		return "", err
	}
	flag := func(name string, def bool) string {
		if v, ok := c.Option[name].(bool); ok {
			def = v
		}
		if def {
			return "true"
		}
		return "false"
	}
	logDir, _ := c.Option["LogDirectory"].(string)
	data := map[string]tmplValue{
		"Name":              c.Name,
		"Path":              path,
		"Arguments":         c.Arguments,
		"ChRoot":            c.ChRoot,
		"UserName":          c.UserName,
		"WorkingDirectory":  c.WorkingDirectory,
		"KeepAlive":         flag("KeepAlive", true),
		"RunAtLoad":         flag("RunAtLoad", false),
		"SessionCreate":     flag("SessionCreate", false),
		"StandardOutPath":   fmt.Sprintf("%s/%s.out.log", logDir, c.Name),
		"StandardErrorPath": fmt.Sprintf("%s/%s.err.log", logDir, c.Name),
		"EnvVars":           []string(nil),
	}
	tmpl, _ := c.Option["LaunchdConfig"].(string)
	return renderTemplate(tmpl, data, launchdFuncs)
}

func (a *launchdAgent) domain() string { return fmt.Sprintf("gui/%d", a.uid) }
func (a *launchdAgent) target() string { return a.domain() + "/" + a.label }

func (a *launchdAgent) plan(replace bool) []string {
	var p []string
	if replace {
		p = append(p,
			ShellLine("launchctl", "unload", a.file()),
			"# if that fails: "+ShellLine("launchctl", "bootout", a.target()),
			ShellLine("launchctl", "unload", a.file())+"  # again, as part of removing the agent; a failure is ignored",
			"# remove "+a.file())
	}
	return append(p,
		"# create the directory "+a.logDir(),
		"# write "+a.file()+" (shown above)",
		ShellLine("launchctl", "load", a.file()),
		"# if that fails: "+ShellLine("launchctl", "bootstrap", a.domain(), a.file()))
}

func (a *launchdAgent) logs() string { return "tail -f " + shellQuote(a.logFile("err")) }

func (a *launchdAgent) notes() []string {
	return []string{
		"Logs:    " + a.logs() + " (and .out.log beside it)",
		"Status:  taskd service-status (or: launchctl print " + a.target() + ")",
		"The agent does not see your shell's environment; launchd gives it a",
		"minimal PATH. See docs/service.md for passing PATH and API keys.",
	}
}

func (a *launchdAgent) noManager(ctx context.Context) error {
	if _, err := a.lookPath("launchctl"); err != nil {
		return &NoServiceManagerError{Manager: "launchd", Reason: "launchctl is not installed"}
	}
	return nil
}

func (a *launchdAgent) prepare() error {
	if err := a.mkdirAll(a.logDir()); err != nil {
		return fmt.Errorf("create log directory: %w", err)
	}
	return nil
}

// start loads the agent with kardianos's 'launchctl load', and where newer
// macOS refuses that ("Load failed: 5: Input/output error") bootstraps it
// into the user's GUI domain itself.
func (a *launchdAgent) start(ctx context.Context, m manager) error {
	err := m.Start()
	if err == nil {
		return nil
	}
	if _, err2 := a.run(ctx, "launchctl", "bootstrap", a.domain(), a.file()); err2 != nil {
		return errors.Join(err, err2)
	}
	return nil
}

// stop unloads the agent with kardianos's 'launchctl unload', falling back
// to 'launchctl bootout'.
func (a *launchdAgent) stop(ctx context.Context, m manager) error {
	err := m.Stop()
	if err == nil {
		return nil
	}
	if _, err2 := a.run(ctx, "launchctl", "bootout", a.target()); err2 != nil {
		return errors.Join(err, err2)
	}
	return nil
}

func (a *launchdAgent) warnings(ctx context.Context) []string { return nil }
