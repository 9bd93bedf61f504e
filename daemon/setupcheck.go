package daemon

// This file exports, for taskd doctor, the rules the daemon applies to its
// setup, so that the checks and the daemon cannot disagree.

// CheckPrivate returns nil when path belongs to the daemon's user and can
// be written only by it, and otherwise an *fsroot.UnsafeError wrapping
// ErrInsecure that names the owner or the mode and the command that fixes
// it. It is the rule the daemon applies to the root and
// to every list unless --insecure. It fails like os.Stat when path cannot
// be examined.
func CheckPrivate(path string) error {
	return checkPrivate(path)
}

// CheckList returns nil when the daemon serves the list at path, and
// otherwise why not: an *fsroot.UnsafeError (wrapping ErrInsecure) when
// the list belongs to another user, other users can write to it (the
// daemon serves such a list with --insecure), or its .taskd area is, or
// holds, a symbolic link.
func CheckList(path string) error {
	return checkList(path, false)
}
