package retention

import (
	"io/fs"
	"path/filepath"
	"time"
)

// newest returns the latest modification time of rel inside listDir and of
// everything under it (no link followed): when the tree was last touched.
func newest(listDir, rel string) time.Time {
	var t time.Time
	filepath.WalkDir(filepath.Join(listDir, rel), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.ModTime().After(t) {
			t = fi.ModTime()
		}
		return nil
	})
	return t
}

// size returns the bytes the regular files under rel inside listDir hold.
func size(listDir, rel string) int64 {
	var n int64
	filepath.WalkDir(filepath.Join(listDir, rel), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
