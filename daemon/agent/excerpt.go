package agent

import "strings"

// TailOf returns the last n bytes of s, starting at a line boundary when
// one is near (else at a character boundary), marked as cut with "…". A
// prompt quotes the end of an agent's output with it: the end is what
// says how a run went.
func TailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	if i := strings.IndexByte(s[cut:], '\n'); i >= 0 && i < n/2 {
		return "…\n" + s[cut+i+1:]
	}
	for cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut++
	}
	return "…" + s[cut:]
}

// Fence quotes text for a prompt as a block that no line of the text can
// close.
func Fence(text string) string {
	mark := "~~~"
	for strings.Contains(text, mark) {
		mark += "~"
	}
	return mark + "\n" + text + "\n" + mark
}
