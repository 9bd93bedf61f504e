package config

import (
	"fmt"
	"math"

	"github.com/taskd/taskd/daemon/calendar"
)

// The settings of a list or a profile that say when its tasks may start
// and how many at once (docs/scheduling.md): its windows of hours, the
// budget of each window, and its concurrency.

// A Queue is what a list or a profile sets of the queue.
type Queue struct {
	// Windows are the hours in which its tasks may start (none: always).
	Windows calendar.Windows
	// MaxCostUSDPerWindow is what the agents started in one window (with
	// no windows, in one day) may spend together; once it is spent, no
	// more start until the next window (0: no bound).
	MaxCostUSDPerWindow float64
}

// Bounded reports whether q holds anything back.
func (q Queue) Bounded() bool { return len(q.Windows) > 0 || q.MaxCostUSDPerWindow > 0 }

// validateQueue checks the queue settings of a list or a profile.
func validateQueue(concurrency int, windows []string, perWindow float64) error {
	if concurrency < 0 || concurrency > MaxConcurrency {
		return fmt.Errorf(`"concurrency" is %d; it must be between 1 and %d (0 or absent: no limit of its own)`, concurrency, MaxConcurrency)
	}
	if _, err := calendar.ParseWindows(windows); err != nil {
		return fmt.Errorf(`"windows": %w`, err)
	}
	if perWindow < 0 || math.IsInf(perWindow, 0) || math.IsNaN(perWindow) {
		return fmt.Errorf(`"maxCostUsdPerWindow" is %v; it must be an amount of US dollars such as 5 (0 or absent: no bound)`, perWindow)
	}
	return nil
}

// compileQueue returns the Queue of the settings validateQueue accepted.
func compileQueue(windows []string, perWindow float64) Queue {
	ws, _ := calendar.ParseWindows(windows)
	return Queue{Windows: ws, MaxCostUSDPerWindow: perWindow}
}

// ListQueue returns what list id sets of the queue.
func (c *Config) ListQueue(id string) Queue {
	return c.listQueues[id]
}
