package readable

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The files of the user database OtherHomes reads.
const (
	passwdFile    = "/etc/passwd"
	loginDefsFile = "/etc/login.defs"
)

// OtherHomes returns the home directories of the machine's other users,
// as its user database knows them: root's (unless the current user is
// root), and those of the accounts of people — the user ids
// /etc/login.defs gives them (UID_MIN to UID_MAX, 1000 to 60000 unless it
// says otherwise) — other than the current user, whose home is home.
// Service accounts (www-data's /var/www, a daemon's /usr/sbin) are no
// one's private files. A home that is "/" or holds home is left out: it
// would deny everything. On macOS the people of its directory service are
// added (homes_darwin.go).
func OtherHomes(home string) []string {
	return otherHomes(passwdFile, loginDefsFile, os.Getuid(), home)
}

func otherHomes(passwd, loginDefs string, self int, home string) []string {
	lo, hi := uidRange(loginDefs)
	var out []string
	add := func(dir string) {
		dir = filepath.Clean(dir)
		if !filepath.IsAbs(dir) || dir == "/" || home != "" && (within(home, dir) || within(resolve(home), dir)) {
			return
		}
		for _, d := range out {
			if d == dir {
				return
			}
		}
		out = append(out, dir)
	}
	f, err := os.Open(passwd)
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// name:password:uid:gid:gecos:home:shell
			fields := strings.Split(sc.Text(), ":")
			if len(fields) < 7 || strings.HasPrefix(fields[0], "#") {
				continue
			}
			uid, err := strconv.Atoi(fields[2])
			if err != nil || uid == self || uid != 0 && (uid < lo || uid > hi) {
				continue
			}
			add(fields[5])
		}
	} else if self != 0 {
		add("/root") // no database to read: root's home at least
	}
	for _, dir := range directoryHomes(self) {
		add(dir)
	}
	return out
}

// uidRange is the range of user ids login.defs gives people.
func uidRange(loginDefs string) (lo, hi int) {
	lo, hi = 1000, 60000
	data, err := os.ReadFile(loginDefs)
	if err != nil {
		return lo, hi
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) != 2 {
			continue
		}
		n, err := strconv.Atoi(fields[1])
		if err != nil {
			continue
		}
		switch fields[0] {
		case "UID_MIN":
			lo = n
		case "UID_MAX":
			hi = n
		}
	}
	return lo, hi
}
