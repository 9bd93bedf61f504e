package prompt

import (
	"strconv"
	"strings"
)

// resultRef is the start of a named-result reference: $RESULT[name].
const resultRef = "$RESULT["

// ref is one $RESULT[name] in a text.
type ref struct {
	start, end int // byte offsets of "$RESULT[" and just after "]"
	name       string
	line       int
}

// refs finds every $RESULT[name] in text. A "$RESULT[" that is not
// followed by a name and "]" is an *Error naming its line.
func refs(text string) ([]ref, error) {
	var out []ref
	line := 1
	for off := 0; ; {
		i := strings.Index(text[off:], resultRef)
		if i < 0 {
			return out, nil
		}
		start := off + i
		line += strings.Count(text[off:start], "\n")
		rest := text[start+len(resultRef):]
		j := strings.IndexByte(rest, ']')
		if nl := strings.IndexByte(rest, '\n'); j < 0 || nl >= 0 && nl < j {
			return nil, &Error{Line: line, Text: clip(text[start:], 40), Msg: "$RESULT[ is not closed with ] on its line; write $RESULT[name]"}
		}
		name := rest[:j]
		if !namePattern.MatchString(name) {
			return nil, &Error{Line: line, Text: resultRef + name + "]",
				Msg: "not a result name: use the name given with as:NAME or /push name=NAME (1 to 64 letters, digits, _ or -)"}
		}
		end := start + len(resultRef) + j + 1
		out = append(out, ref{start, end, name, line})
		off = end
	}
}

// ResultNames returns the names text refers to with $RESULT[name], each
// once, in the order they first appear, so a caller can check they exist
// before running anything. A malformed reference (an unclosed "$RESULT[",
// or one whose name is not 1 to 64 letters, digits, _ or -) fails with an
// *Error naming its line.
func ResultNames(text string) ([]string, error) {
	rs, err := refs(text)
	if err != nil {
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.name] {
			seen[r.name] = true
			names = append(names, r.name)
		}
	}
	return names, nil
}

// SubstituteResults replaces every $RESULT[name] in text with the result
// lookup gives for name. Substituted results are not scanned again. If
// lookup does not know a name (or is nil), nothing is substituted and the
// *Error names every unknown name, at the line of the first; a caller that
// prefers a placeholder returns one from lookup instead. A malformed
// reference fails as in ResultNames.
func SubstituteResults(text string, lookup func(name string) (string, bool)) (string, error) {
	rs, err := refs(text)
	if err != nil {
		return "", err
	}
	var (
		b       strings.Builder
		missing []string
		known   = map[string]bool{} // names already in missing
		first   ref
		last    int
	)
	for _, r := range rs {
		var val string
		ok := false
		if lookup != nil {
			val, ok = lookup(r.name)
		}
		if !ok {
			if len(missing) == 0 {
				first = r
			}
			if !known[r.name] {
				known[r.name] = true
				missing = append(missing, r.name)
			}
			continue
		}
		b.WriteString(text[last:r.start])
		b.WriteString(val)
		last = r.end
	}
	if len(missing) > 0 {
		for i, m := range missing {
			missing[i] = strconv.Quote(m)
		}
		what := "no result is named " + missing[0]
		if len(missing) > 1 {
			what = "no results are named " + orList(missing)
		}
		return "", &Error{Line: first.line, Text: text[first.start:first.end],
			Msg: what + "; a result gets its name from as:NAME or /push name=NAME"}
	}
	b.WriteString(text[last:])
	return b.String(), nil
}
