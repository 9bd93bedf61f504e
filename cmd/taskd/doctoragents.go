package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/internal/proc"
)

// agentCheckPrompt is the one turn of an agent check.
const agentCheckPrompt = "taskd doctor is checking that you can be started and reach your model. Reply with the single word OK and do nothing else."

// agentCheckTimeout bounds one agent check: long enough for a slow first
// start, short enough that an unreachable API is reported while Claude
// Code still retries (the report then quotes the retries).
const agentCheckTimeout = 90 * time.Second

// checkAgents runs each agent profile in use once, for one turn, as the
// daemon would run it: with the environment of the running daemon (pid),
// else the one the user service would start it with, else this shell's
// (said so). Each check is a model call, which costs money: it runs only
// with --agents. Profiles of shell commands (flags "none") have no model
// to ask and are left to the program check.
func (d *doctor) checkAgents(ctx context.Context, cfg *config.Config, fc *config.FileConfig, pid int) {
	env, where, known := d.agentEnviron(ctx, pid)
	if !known {
		d.add(levelWarn, "agents", "checked with "+where+": no daemon runs, and the service's environment could not be read",
			"start the daemon ('taskd start') and check again, so that the check uses its environment ("+serviceDoc+")")
	}
	dir, err := os.MkdirTemp("", "taskd-doctor-")
	if err != nil {
		d.add(levelFail, "agents", err.Error(), "make the temporary directory ($TMPDIR) writable")
		return
	}
	defer os.RemoveAll(dir)
	runner := agent.NewLocal(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	runner.Environ = env
	checked := 0
	for i, name := range slices.Sorted(maps.Keys(cfg.Profiles)) {
		p := cfg.Profiles[name]
		if p.Flags == "none" || !configured(fc, name) && name != cfg.DefaultAgent {
			continue
		}
		checked++
		a := &agent.Attempt{ListDir: dir, ListID: "doctor", TaskID: fmt.Sprintf("check%d", i+1), N: 1, Profile: p,
			Prompt: agentCheckPrompt, Cwd: dir, Timeout: d.agentTimeout, Budget: agent.Budget{MaxTurns: 1}}
		res, out := runner.Run(ctx, a)
		d.agentOutcome("agent "+name, where, p, res, out)
	}
	if checked == 0 {
		d.add(levelOK, "agents", "no agent profile in use asks a model: nothing to check", "")
	}
}

// agentOutcome adds the line of one agent check: ok with how long the
// answer took and its cost, or what went wrong — not authenticated,
// cannot reach the API, executable missing — with the fix.
func (d *doctor) agentOutcome(what, where string, p *config.Profile, res agent.Result, out agent.Outcome) {
	if out == agent.Finished && res.Success {
		detail := fmt.Sprintf("answered in %.1fs with %s", float64(res.DurationMs)/1000, where)
		if res.CostUSD != nil {
			detail += fmt.Sprintf(", for $%.4f", *res.CostUSD)
		}
		d.add(levelOK, what, detail, "")
		return
	}
	why := strings.TrimSpace(res.Error)
	low := strings.ToLower(why)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(low, w) {
				return true
			}
		}
		return false
	}
	switch {
	case out == agent.NotStarted && has("not found", "does not exist", "no such file", "not on path", "permission denied"):
		d.add(levelFail, what, "executable missing: "+why,
			"install "+p.Command[0]+" where the daemon finds it (its PATH: "+serviceDoc+"), or give the profile's command as an absolute path in the configuration file")
	case out == agent.TimedOut && has("had written nothing"):
		d.add(levelFail, what, "no answer, with "+where+": "+why,
			"the agent did not start up in time: run the profile's command by hand in the service's environment to see why ("+strings.Join(p.Command, " ")+")")
	case has("not logged in", "/login", "invalid api key", "api key", "authentication", "unauthorized", "401", "403", "credential"):
		d.add(levelFail, what, "not authenticated, with "+where+": "+why, credentialsFix(p))
	case out == agent.TimedOut || has("no answer from the api", "connection", "econnrefused", "enotfound", "getaddrinfo", "fetch failed", "network", "etimedout", "socket hang up", "certificate"):
		d.add(levelFail, what, "cannot reach the API, with "+where+": "+why,
			"check that this machine reaches the API with the service's environment: a proxy needs HTTPS_PROXY there, a gateway ANTHROPIC_BASE_URL, and the profile's \"env\" must pass them ("+serviceDoc+")")
	default:
		d.add(levelFail, what, "the agent did not answer as asked, with "+where+": "+why,
			"run the profile's command by hand, with a short prompt, in the service's environment: "+strings.Join(p.Command, " "))
	}
}

// credentialsFix says how the service gets an agent's credentials.
func credentialsFix(p *config.Profile) string {
	switch p.Flags {
	case "claude":
		return "give the service ANTHROPIC_API_KEY: put ANTHROPIC_API_KEY=… in ~/.config/taskd/env (mode 600), load it with EnvironmentFile=-%h/.config/taskd/env in 'systemctl --user edit taskd', restart the service (" + serviceDoc + "); or log in as this user with 'claude /login'"
	case "codex":
		return "give the service OPENAI_API_KEY (" + serviceDoc + "), or log in as this user with 'codex login'"
	case "opencode":
		return "give the service the provider's key (" + serviceDoc + "), or log in as this user with 'opencode auth login'"
	}
	return "give the service the agent's credentials, and name them in the profile's \"env\" (" + serviceDoc + ")"
}

// agentEnviron is the environment a daemon would build its agents' from:
// the running daemon's (pid), else what the user service would start one
// with, else this shell's (known false).
func (d *doctor) agentEnviron(ctx context.Context, pid int) (env []string, where string, known bool) {
	if pid > 0 && d.daemonEnviron != nil {
		if env, ok := d.daemonEnviron(pid); ok {
			return env, fmt.Sprintf("the environment of the daemon (pid %d)", pid), true
		}
	}
	if d.serviceEnviron != nil {
		if env, where, ok := d.serviceEnviron(ctx); ok {
			return env, where, true
		}
	}
	return os.Environ(), "this shell's environment", false
}

// procEnviron reads the environment of process pid from /proc, where the
// system has it (Linux, for a process of the same user).
func procEnviron(pid int) ([]string, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return nil, false
	}
	var env []string
	for _, kv := range strings.Split(string(data), "\x00") {
		if strings.Contains(kv, "=") {
			env = append(env, kv)
		}
	}
	return env, true
}

// systemdEnviron is the environment systemd would start the taskd user
// service with: the user manager's (systemctl --user show-environment),
// then the unit's Environment= and EnvironmentFile= lines, drop-ins
// included. On other systems it knows nothing.
func systemdEnviron(ctx context.Context) ([]string, string, bool) {
	if runtime.GOOS != "linux" {
		return nil, "", false
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	manager, err := proc.Output(exec.CommandContext(ctx, "systemctl", "--user", "show-environment"))
	if err != nil {
		return nil, "", false
	}
	unit, err := proc.Output(exec.CommandContext(ctx, "systemctl", "--user", "show", "taskd.service", "--property=LoadState,Environment,EnvironmentFiles"))
	if err != nil || !strings.Contains(string(unit), "LoadState=loaded") {
		return nil, "", false
	}
	return serviceEnv(string(manager), string(unit), fsroot.ReadRegular), "the environment of the taskd user service (systemd)", true
}

// serviceEnv merges the user manager's environment (NAME=value lines) with
// a unit's Environment= and EnvironmentFiles= properties as systemctl show
// prints them; a later value wins, as in systemd.
func serviceEnv(manager, unit string, read func(string) ([]byte, error)) []string {
	vars := map[string]string{}
	var order []string
	set := func(kv string) {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return
		}
		if _, seen := vars[name]; !seen {
			order = append(order, name)
		}
		vars[name] = value
	}
	for _, line := range strings.Split(manager, "\n") {
		set(unquote(strings.TrimSpace(line)))
	}
	for _, line := range strings.Split(unit, "\n") {
		switch {
		case strings.HasPrefix(line, "Environment="):
			for _, kv := range splitQuoted(strings.TrimPrefix(line, "Environment=")) {
				set(kv)
			}
		case strings.HasPrefix(line, "EnvironmentFiles="):
			// "/home/u/.config/taskd/env (ignore_errors=yes)"
			file, _, _ := strings.Cut(strings.TrimPrefix(line, "EnvironmentFiles="), " (")
			data, err := read(strings.TrimSpace(file))
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(strings.NewReader(string(data)))
			for sc.Scan() {
				l := strings.TrimSpace(sc.Text())
				if l == "" || l[0] == '#' || l[0] == ';' {
					continue
				}
				set(unquote(strings.TrimPrefix(l, "export ")))
			}
		}
	}
	env := make([]string, 0, len(order))
	for _, name := range order {
		env = append(env, name+"="+vars[name])
	}
	return env
}

// splitQuoted splits systemd's list of assignments, some of them in
// double quotes ("A=b c" D=e).
func splitQuoted(s string) []string {
	var out []string
	var b strings.Builder
	quoted, begun := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, begun = !quoted, true
		case r == ' ' && !quoted:
			if begun {
				out = append(out, b.String())
			}
			b.Reset()
			begun = false
		default:
			b.WriteRune(r)
			begun = true
		}
	}
	if begun {
		out = append(out, b.String())
	}
	return out
}

// unquote takes the quotes off a NAME="value" or NAME='value' line.
func unquote(kv string) string {
	name, value, ok := strings.Cut(kv, "=")
	if !ok || len(value) < 2 {
		return kv
	}
	if q := value[0]; (q == '"' || q == '\'') && value[len(value)-1] == q {
		value = value[1 : len(value)-1]
	}
	return name + "=" + value
}
