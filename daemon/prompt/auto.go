package prompt

import (
	"errors"
	"regexp"
	"strings"
)

// The output of an auto planner (subtask2: auto, or {auto:true}) carries
// the workflow it wrote in one tag:
//
//	<subtask2 auto="true">
//	/subtask {return:review it || run the tests} implement the feature
//	</subtask2>

var (
	autoOpen  = regexp.MustCompile(`(?i)<subtask2\s+auto\s*=\s*["']?true["']?\s*>`)
	autoBlock = regexp.MustCompile(`(?is)<subtask2\s+auto\s*=\s*["']?true["']?\s*>(.*?)</subtask2\s*>`)
)

// ParseAutoOutput finds the workflow in a planner's output: exactly one
// <subtask2 auto="true">…</subtask2> block (the tag's name and attribute
// in any case, the value quoted or not), holding a prompt that starts with
// /subtask {…} and has no other slash lines around its content. It
// returns that prompt parsed. It fails with an *Error when there is no
// such block, more than one, an unclosed one, or one whose prompt is not
// a single /subtask (or is itself auto); line numbers count in output.
func ParseAutoOutput(output string, opts ParseOptions) (*Script, error) {
	opens := autoOpen.FindAllStringIndex(output, -1)
	blocks := autoBlock.FindAllStringSubmatchIndex(output, -1)
	switch {
	case len(opens) == 0:
		return nil, errorf(`the planner's output has no <subtask2 auto="true"> block; it must write its workflow in one`)
	case len(blocks) < len(opens):
		return nil, &Error{Line: lineOf(output, opens[len(blocks)][0]), Msg: `<subtask2 auto="true"> is not closed by </subtask2>`}
	case len(blocks) > 1:
		return nil, &Error{Line: lineOf(output, blocks[1][0]), Msg: `the planner's output has more than one <subtask2 auto="true"> block; it must have exactly one`}
	}
	start, end := blocks[0][2], blocks[0][3]
	offset := lineOf(output, start) - 1
	inner := strings.TrimLeft(output[start:end], " \t")
	s, err := Parse(inner, opts)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) && pe.Line > 0 {
			c := *pe
			c.Line += offset
			return nil, &c
		}
		return nil, err
	}
	for i := range s.Leading {
		s.Leading[i].Line += offset
	}
	for i := range s.Trailing {
		s.Trailing[i].Line += offset
	}
	bad := func(msg string) error {
		return &Error{Line: offset + 1, Msg: msg}
	}
	if len(s.Leading) != 1 || !isSubtask(s.Leading[0].Cmd) {
		return nil, bad("the planner's workflow must be a single /subtask {…} prompt, with no other slash lines before it")
	}
	if len(s.Trailing) > 0 {
		return nil, bad("the planner's workflow must be a single /subtask {…} prompt, with no slash lines after it")
	}
	if s.Leading[0].Cmd.(*Subtask).Overrides.Auto {
		return nil, bad("the planner's workflow may not itself be auto:true")
	}
	return s, nil
}

// lineOf returns the 1-based line of byte offset i in text.
func lineOf(text string, i int) int { return strings.Count(text[:i], "\n") + 1 }
