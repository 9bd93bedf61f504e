package taskfile

import (
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/taskd/taskd/internal/fsroot"
)

// Misnamed reports whether the file called name looks like a task file but
// cannot be one, because its stem is not a task id or its extension is not
// exactly ".json"; it then says why and how to rename it. Names that are
// not meant as task files are not misnamed: dot-files (temporary files,
// taskd's and Claude Code's own), names not ending in .json in any case,
// and lock directories.
func Misnamed(name string) (problem, fix string, ok bool) {
	if strings.HasPrefix(name, ".") || len(name) < len(".json") {
		return "", "", false
	}
	stem, ext := name[:len(name)-len(".json")], name[len(name)-len(".json"):]
	if !strings.EqualFold(ext, ".json") {
		return "", "", false
	}
	if ext != ".json" {
		return fmt.Sprintf("the name ends in %q: task files end in \".json\", in lower case, so taskd does not read this one", ext),
			"Rename it: mv " + shellQuote(name) + " " + shellQuote(stem+".json"), true
	}
	if ValidID(stem) {
		return "", "", false
	}
	why := ""
	switch {
	case stem == "":
		why = "the name has nothing before .json"
	case len(stem) > 128:
		why = fmt.Sprintf("the name before .json is %d bytes long, more than 128", len(stem))
	default:
		for _, r := range stem {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				why = fmt.Sprintf("the name has %s, which a task id cannot", describeRune(r))
				break
			}
		}
	}
	return why + ": a task id (the name before .json) is 1-128 of A-Z a-z 0-9 _ -, so taskd does not read this file",
		"Rename it to a task id, for example: mv " + shellQuote(name) + " " + shellQuote(suggestID(stem)+".json"), true
}

// describeRune names r for a person.
func describeRune(r rune) string {
	switch {
	case r == ' ':
		return "a space"
	case r == utf8.RuneError:
		return "a byte that is not UTF-8"
	case r < ' ' || r == 0x7f:
		return fmt.Sprintf("a control character (%U)", r)
	case r >= 0x80:
		return fmt.Sprintf("the non-ASCII letter %q", r)
	}
	return fmt.Sprintf("the character %q", r)
}

// suggestID turns a stem into a task id: every other character becomes
// "_", and the result is cut to 128 bytes.
func suggestID(stem string) string {
	id := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, stem)
	if id == "" {
		id = "task"
	}
	return id[:min(len(id), 128)]
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Names returns the ids of the task files in the directory, as List does,
// and the names of the files that look like task files but are misnamed
// (see Misnamed), in byte order.
func (d *Dir) Names() (ids, misnamed []string, err error) {
	f, err := fsroot.OpenDirectory(d.path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, nil, &os.PathError{Op: "list", Path: d.path, Err: err}
	}
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".json"); ok && ValidID(id) {
			ids = append(ids, id)
		} else if _, _, bad := Misnamed(n); bad {
			misnamed = append(misnamed, n)
		}
	}
	SortIDs(ids)
	SortIDs(misnamed)
	return ids, misnamed, nil
}
