package main

import (
	"strings"
	"testing"
)

// TestResolve: each name resolves to the command it stands for: "run" is
// the daemon except for an agent inside a task, "start" the service
// except with task names, and every alias the command that replaces it.
func TestResolve(t *testing.T) {
	tests := []struct {
		name     string
		taskFile string
		args     []string
		want     string // the command run: its name, or the name it stands for
	}{
		{"run", "", []string{"--root", "x"}, "run"},
		{"run", "", nil, "run"},
		{"run", "/l/1.json", []string{"2"}, "child start"},
		{"run", "", []string{"--task", "l/1"}, "child start"},
		{"run", "", []string{"-task=l/1", "3"}, "child start"},
		{"start", "", nil, "start"},
		{"start", "", []string{"l/1"}, "retry"},
		{"start", "", []string{"--root", "x", "l/1"}, "retry"},
		{"push", "", nil, "child push"},
		{"queue", "", nil, "child list"},
		{"inbox", "", nil, "child inbox"},
		{"check", "", nil, "child check"},
		{"receive", "", nil, "child receive"},
		{"send", "", nil, "child send"},
		{"kill", "", nil, "child cancel"},
		{"delegate", "", nil, "child delegate"},
		{"handoff", "", nil, "child handoff"},
		{"converge", "", nil, "child converge"},
		{"child start", "", nil, "child start"},
		{"cancel", "/l/1.json", []string{"a"}, "cancel"},
		{"retry", "", []string{"l/1"}, "retry"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" "+strings.Join(tt.args, " ")+" "+tt.taskFile, func(t *testing.T) {
			t.Setenv("TASKD_TASK_FILE", tt.taskFile)
			c := resolve(tt.name, tt.args)
			if c == nil {
				t.Fatalf("resolve(%q, %q) = nil", tt.name, tt.args)
			}
			got := firstNonEmpty(c.replacedBy, c.name)
			if got != tt.want {
				t.Errorf("resolve(%q, %q) with TASKD_TASK_FILE=%q runs %q, want %q", tt.name, tt.args, tt.taskFile, got, tt.want)
			}
			if c.replacedBy != "" {
				target := resolve(c.replacedBy, nil)
				if target == nil || target.usage != c.usage || c.group != groupAliases {
					t.Errorf("alias %q: replaced by %v, usage %q, group %q; want the usage of %q and the aliases' group", c.name, target, c.usage, c.group, c.replacedBy)
				}
			}
		})
	}
	for _, a := range aliases {
		if c := resolve(a.replacedBy, nil); c == nil || c.replacedBy != "" {
			t.Errorf("alias %s stands for %q, which is no command", a.old, a.replacedBy)
		}
	}
}

// TestHelpGroups: 'taskd help' lists the child commands under their
// heading and the aliases in a section of their own; 'taskd help child'
// lists the child commands alone; an alias's manual names the command
// that replaces it.
func TestHelpGroups(t *testing.T) {
	out, _, code := runCLI(t, "help")
	if code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	sections := map[string]string{}
	for _, part := range strings.Split(out, "\n\n") {
		head, body, _ := strings.Cut(part, ":\n")
		sections[head] = body
	}
	child := sections[groupChild]
	for _, c := range []string{"child push", "child start", "child list", "child inbox", "child check", "child receive",
		"child send", "child cancel", "child delegate", "child handoff", "child converge"} {
		if !strings.Contains(child, "\n  "+c+" ") && !strings.HasPrefix(child, "  "+c+" ") {
			t.Errorf("taskd help: %q is not under %q:\n%s", c, groupChild, child)
		}
	}
	al := sections[groupAliases]
	for _, a := range aliases {
		line := "  " + a.old
		if !strings.Contains(al, line) || !strings.Contains(al, "'taskd "+a.replacedBy+"'") {
			t.Errorf("taskd help: alias %s → %s is not in the section %q:\n%s", a.old, a.replacedBy, groupAliases, al)
		}
	}
	tasks := sections["Tasks"]
	for _, c := range []string{"cancel", "retry"} {
		if !strings.Contains(tasks, "  "+c+" ") {
			t.Errorf("taskd help: %s is not among the Tasks:\n%s", c, tasks)
		}
	}
	if strings.Contains(sections["Tasks"]+sections["Daemon"], "  push ") || strings.Contains(child, "  kill") {
		t.Errorf("an alias is listed among the commands:\n%s", out)
	}

	out, _, code = runCLI(t, "help", "child")
	if code != 0 || !strings.Contains(out, "  child push ") || strings.Contains(out, "  status ") {
		t.Errorf("help child: exit %d\n%s", code, out)
	}
	manualOf := manual(resolve("child push", nil))
	for _, args := range [][]string{{"help", "child", "push"}, {"child", "help", "push"}, {"help", "child push"}} {
		if out, errOut, code := runCLI(t, args...); code != 0 || out != manualOf {
			t.Errorf("%v: exit %d, %q\n%s; want the manual of child push", args, code, errOut, out)
		}
	}
	if out, _, code := runCLI(t, "help", "push"); code != 0 || !strings.Contains(out, "old name of 'taskd child push'") {
		t.Errorf("help push: exit %d\n%s", code, out)
	}
	if out, _, code := runCLI(t, "help", "start"); code != 0 || !strings.Contains(out, "old name of 'taskd retry'") || !strings.Contains(out, "starts taskd's user service") {
		t.Errorf("help start: exit %d\n%s", code, out)
	}
	if _, errOut, code := runCLI(t, "child"); code != 2 || !strings.Contains(errOut, "taskd child COMMAND") {
		t.Errorf("child alone: exit %d, %q; want 2 and the list", code, errOut)
	}
	if _, errOut, code := runCLI(t, "child", "frob"); code != 2 || !strings.Contains(errOut, `unknown command "child frob"`) {
		t.Errorf("child frob: exit %d, %q", code, errOut)
	}
}
