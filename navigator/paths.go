package navigator

import (
	"path"
	"regexp"
	"strings"
)

// relativeRef is flow's pattern for paths relative to a workflow's source:
// "./" followed by word characters, dashes, dots and slashes. Like flow it
// also matches inside "../x" and swallows a sentence's final period.
var relativeRef = regexp.MustCompile(`\./[\w\-./]+`)

// resolveRefs replaces every ./path in s by its location under sourceRoot.
// Without a source root, or for empty text, s is returned unchanged.
func resolveRefs(s, sourceRoot string) string {
	if s == "" || sourceRoot == "" || !strings.Contains(s, "./") {
		return s
	}
	return relativeRef.ReplaceAllStringFunc(s, func(ref string) string {
		return joinPath(sourceRoot, ref)
	})
}

// joinPath joins and cleans like Node's path.join: unlike Go's path.Join it
// keeps a trailing slash.
func joinPath(dir, p string) string {
	j := path.Join(dir, p)
	if strings.HasSuffix(p, "/") && !strings.HasSuffix(j, "/") {
		j += "/"
	}
	return j
}

// contextBlock renders the "## Context" section listing a step's
// context_files: "./" entries resolve against the source root when there is
// one, everything else against the project root. There is no block without
// files or without a project root.
func contextBlock(files []string, sourceRoot, projectRoot string) string {
	if len(files) == 0 || projectRoot == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Context\n\nBefore beginning, load the following:")
	for _, f := range files {
		root := projectRoot
		if sourceRoot != "" && strings.HasPrefix(f, "./") {
			root = sourceRoot
		}
		b.WriteString("\n- Read file: ")
		b.WriteString(joinPath(root, f))
	}
	return b.String()
}
