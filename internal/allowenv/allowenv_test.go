package allowenv

import (
	"slices"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		{"HOME", true}, {"LC_ALL", true}, {"XDG_STATE_HOME", true}, {"LANG", true},
		{"HOMEX", false}, {"ANTHROPIC_API_KEY", false}, {"PATH", false}, {"GIT_DIR", false}, {"LC", false},
	} {
		if got := Match(c.name, Base); got != c.want {
			t.Errorf("Match(%q, Base) = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestEnviron(t *testing.T) {
	t.Setenv("TASKD_TEST_SECRET", "SECRET-1")
	t.Setenv("HOME", "/home/me")
	t.Setenv("LC_TIME", "C")
	env := Environ(Base)
	if !slices.Contains(env, "HOME=/home/me") || !slices.Contains(env, "LC_TIME=C") {
		t.Errorf("Environ(Base) lacks HOME or LC_TIME: %v", env)
	}
	for _, kv := range env {
		if kv == "TASKD_TEST_SECRET=SECRET-1" {
			t.Errorf("Environ(Base) passes a variable it does not allow: %v", env)
		}
	}
}
