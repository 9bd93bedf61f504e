package eventlog

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/internal/fsroot"
)

// Rotation is how a list's event log is kept from growing without bound:
// once events.jsonl reaches MaxBytes it becomes events.jsonl.1, the one
// before events.jsonl.2, and so on; Keep rotated files are kept.
type Rotation struct {
	MaxBytes int64
	Keep     int
}

// fileName is the log's name in the area; rotated files add ".N".
const fileName = "events.jsonl"

// Rotate renames the log of the list at listDir to events.jsonl.1, after
// moving each kept file one number up and removing those past keep
// (keep 0 keeps none). A missing log is not an error. No link is followed.
func Rotate(listDir string, keep int) error {
	rel := func(n int) string {
		if n == 0 {
			return filepath.Join(area.Name, fileName)
		}
		return filepath.Join(area.Name, fileName+"."+strconv.Itoa(n))
	}
	var errs []error
	// Files past keep (left by a larger setting, or the oldest) go.
	for _, n := range rotated(listDir) {
		if n >= keep {
			if err := fsroot.Remove(listDir, rel(n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	for n := keep - 1; n >= 0; n-- {
		if err := fsroot.Rename(listDir, rel(n), rel(n+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if keep == 0 {
		if err := fsroot.Remove(listDir, rel(0)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("rotate the event log of %s: %w", listDir, err)
	}
	return nil
}

// Files returns the names of the list's event log files in the area,
// the rotated ones first, oldest first, then events.jsonl.
func Files(listDir string) []string {
	nums := rotated(listDir)
	out := make([]string, 0, len(nums)+1)
	for i := len(nums) - 1; i >= 0; i-- {
		out = append(out, fileName+"."+strconv.Itoa(nums[i]))
	}
	return append(out, fileName)
}

// rotated returns the numbers of the rotated files present, in order.
func rotated(listDir string) []int {
	entries, err := fsroot.ReadDir(listDir, area.Name)
	if err != nil {
		return nil
	}
	var nums []int
	for _, e := range entries {
		s, ok := strings.CutPrefix(e.Name(), fileName+".")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if n, err := strconv.Atoi(s); err == nil && n > 0 && strconv.Itoa(n) == s {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums) // ReadDir sorts by name: "10" before "2"
	return nums
}
