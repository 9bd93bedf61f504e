package config

import (
	"errors"
	"fmt"
	"time"
)

// The settings of a profile that govern its agents' runs beyond the
// command line: what a usage limit does, and the budget of each attempt
// (docs/agents.md).

func (p ProfileSpec) validateRuns() error {
	switch p.OnLimit {
	case "", "pause", "fail":
	default:
		return fmt.Errorf(`"onLimit" is %q, want "pause" or "fail"`, p.OnLimit)
	}
	for _, d := range []struct{ name, v string }{{"limitBackoff", p.LimitBackoff}, {"limitBackoffMax", p.LimitBackoffMax}} {
		if d.v == "" {
			continue
		}
		if v, err := time.ParseDuration(d.v); err != nil || v <= 0 {
			return fmt.Errorf(`%q %q is not a positive duration such as "1m"`, d.name, d.v)
		}
	}
	return validateBudget(p.MaxTurns, p.MaxCostUSD)
}

// validateBudget checks a maxTurns and a maxCostUsd.
func validateBudget(turns int, usd float64) error {
	if turns < 0 {
		return fmt.Errorf(`"maxTurns" is %d; it must be a whole number ≥ 1 (0 or absent: no bound)`, turns)
	}
	if usd < 0 {
		return errors.New(`"maxCostUsd" is negative; it must be an amount of US dollars such as 2.5 (0 or absent: no bound)`)
	}
	return nil
}

// compileRuns sets out's run settings from p: a usage limit pauses the
// agents of a kind that runs a model unless p says otherwise, and fails
// every other command's.
func (p ProfileSpec) compileRuns(out *Profile) {
	switch p.OnLimit {
	case "pause":
		out.PauseOnLimit = true
	case "":
		k, ok := KindNamed(out.Flags)
		out.PauseOnLimit = !ok || k.Model
	}
	out.LimitBackoff = durationOr(p.LimitBackoff, DefaultLimitBackoff)
	out.LimitBackoffMax = max(durationOr(p.LimitBackoffMax, DefaultLimitBackoffMax), out.LimitBackoff)
	out.MaxTurns, out.MaxCostUSD = p.MaxTurns, p.MaxCostUSD
}
