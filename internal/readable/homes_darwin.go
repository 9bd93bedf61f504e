package readable

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
)

// directoryHomes returns the homes of macOS's people, whom its directory
// service knows and /etc/passwd does not: each directory of /Users that
// the user database says is the home of a user (not self) of a person's
// id (500 and up).
func directoryHomes(self int) []string {
	entries, err := os.ReadDir("/Users")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		u, err := user.Lookup(e.Name())
		if err != nil {
			continue
		}
		uid, err := strconv.Atoi(u.Uid)
		if err != nil || uid == self || uid < 500 || filepath.Clean(u.HomeDir) != filepath.Join("/Users", e.Name()) {
			continue
		}
		out = append(out, u.HomeDir)
	}
	return out
}
