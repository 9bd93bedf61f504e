package admit_test

import (
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/admit"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/pausefile"
)

var t0 = time.Date(2031, 3, 3, 12, 0, 0, 0, time.UTC)

func admission(t *testing.T, fc *config.FileConfig) *admit.Admission {
	t.Helper()
	cfg, err := config.NewConfig(t.TempDir(), nil, fc)
	if err != nil {
		t.Fatal(err)
	}
	return admit.New(cfg)
}

// TestCheck_Windows: a list's window holds its tasks outside it until it
// opens; a profile's window holds the tasks of that profile in any list.
func TestCheck_Windows(t *testing.T) {
	a := admission(t, &config.FileConfig{
		Lists:    map[string]config.ListConfig{"night": {Windows: []string{"22:00-07:00 UTC"}}},
		Profiles: map[string]config.ProfileSpec{"slow": {Command: []string{"sh"}, Windows: []string{"13:00-14:00 UTC"}}},
	})
	for _, tt := range []struct {
		list, profile string
		now           time.Time
		held          bool
		until         time.Time
	}{
		{"night", "", t0, true, t0.Add(10 * time.Hour)},
		{"night", "", t0.Add(10 * time.Hour), false, time.Time{}},
		{"day", "exec", t0, false, time.Time{}},
		{"day", "slow", t0, true, t0.Add(time.Hour)},
		{"day", "slow", t0.Add(time.Hour), false, time.Time{}},
		{"night", "slow", t0.Add(time.Hour), true, t0.Add(10 * time.Hour)},
	} {
		h, held := a.Check(tt.list, tt.profile, tt.now)
		if held != tt.held || !h.Until.Equal(tt.until) {
			t.Errorf("%s/%s at %s: held %v until %s (%s); want %v until %s", tt.list, tt.profile, tt.now.Format("15:04"), held, h.Until, h.Reason, tt.held, tt.until)
		}
	}
}

// TestCheck_Budget: a profile's budget per day holds its tasks once
// spent, until the next day; an attempt whose end is not counted yet
// holds them until it is; a person who lifts the budget's pause lets them
// start for the rest of the day.
func TestCheck_Budget(t *testing.T) {
	a := admission(t, &config.FileConfig{Profiles: map[string]config.ProfileSpec{"claude": {Command: []string{"claude"}, MaxCostUSDPerWindow: 1}}})
	if _, held := a.Check("l", "claude", t0); held {
		t.Fatal("held before anything was spent")
	}
	if !a.Exited("l", "claude") {
		t.Fatal("an agent of a budgeted profile does not count")
	}
	if h, held := a.Check("l", "claude", t0); !held || !strings.Contains(h.Reason, "cost of an attempt") {
		t.Errorf("not held while a cost is unknown: %+v", h)
	}
	if spent := a.Spend("l", "claude", t0.Add(-time.Hour), 0.6, t0); len(spent) != 0 {
		t.Errorf("spent after $0.60 of $1: %+v", spent)
	}
	a.Recorded("l", "claude")
	if _, held := a.Check("l", "claude", t0); held {
		t.Error("held with $0.60 of $1 spent")
	}
	if spent := a.Spend("l", "claude", t0.AddDate(0, 0, -1), 5, t0); len(spent) != 0 {
		t.Errorf("a cost of another day counted: %+v", spent)
	}
	spent := a.Spend("l", "claude", t0, 0.5, t0)
	if len(spent) != 1 || spent[0].Scope != (pausefile.Scope{Kind: "profile", Name: "claude"}) || !spent[0].Until.Equal(time.Date(2031, 3, 4, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("spent %+v", spent)
	}
	h, held := a.Check("l", "claude", t0)
	if !held || !h.Until.Equal(spent[0].Until) {
		t.Errorf("not held with the budget spent: %+v", h)
	}
	if _, held := a.Check("l", "exec", t0); held {
		t.Error("another profile is held")
	}
	if _, held := a.Check("l", "claude", spent[0].Until); held {
		t.Error("held the next day")
	}
	// The daemon records the budget's pause; a person lifts it.
	var rec pausefile.Record
	rec.Set(spent[0].Scope, pausefile.Pause{By: pausefile.ByBudget, Until: spent[0].Until})
	a.SetPauses(rec, t0)
	a.SetPauses(pausefile.Record{}, t0.Add(time.Minute))
	if h, held := a.Check("l", "claude", t0.Add(time.Minute)); held {
		t.Errorf("held after the budget's pause was lifted: %s", h.Reason)
	}
}

// TestCheck_Pauses: a person's pause of everything, of a list or of a
// profile holds the tasks it covers, with the command that lifts it.
func TestCheck_Pauses(t *testing.T) {
	a := admission(t, nil)
	var rec pausefile.Record
	rec.Set(pausefile.Scope{Kind: pausefile.List, Name: "l"}, pausefile.Pause{By: pausefile.ByPerson, Reason: "demo"})
	rec.Set(pausefile.Scope{Kind: pausefile.Profile, Name: "claude"}, pausefile.Pause{By: pausefile.ByPerson})
	a.SetPauses(rec, t0)
	for _, tt := range []struct {
		list, profile, want string
	}{
		{"l", "exec", "taskd resume l"},
		{"o", "claude", "taskd resume --profile claude"},
		{"o", "exec", ""},
	} {
		h, held := a.Check(tt.list, tt.profile, t0)
		if held != (tt.want != "") || !strings.Contains(h.Reason, tt.want) {
			t.Errorf("%s/%s: held %v (%s), want %q", tt.list, tt.profile, held, h.Reason, tt.want)
		}
	}
	rec.Set(pausefile.Scope{Kind: pausefile.All}, pausefile.Pause{By: pausefile.ByPerson})
	a.SetPauses(rec, t0)
	if h, held := a.Check("o", "exec", t0); !held || !strings.Contains(h.Reason, "everything is paused") {
		t.Errorf("everything paused: %+v", h)
	}
}
