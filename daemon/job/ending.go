package job

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// The ends of an attempt that are neither success nor failure: a usage
// limit pauses the task (and its profile), denied tool calls ask a
// person (docs/agents.md).

// MaxPauses is how many times in a row a task may be paused by usage
// limits before it fails: a limit misread in an agent's output must not
// keep a task paused for ever.
const MaxPauses = 12

// pauseEnd records, in the task's record rec, that the attempt met the
// usage limit of res: the pause (metadata.taskd.pause: the agent's words,
// the profile, when the limit resets and when the task resumes), retryAt
// (when it resumes) and the count of pauses in a row. The profile's
// agents pause until then (Pauses.Hit). Past MaxPauses the task fails
// instead. It returns the end and its event's data.
func (j *Job) pauseEnd(rec *task.Record, res agent.Result, now time.Time) (ending, map[string]any) {
	lim := agent.Limit{Message: "usage limit"}
	if res.Limit != nil {
		lim = *res.Limit
	}
	if lim.Until.IsZero() {
		if prof := j.Config.Profiles[lim.Profile]; prof != nil {
			lim.Until = j.Pauses.Hit(prof, lim, now)
		} else {
			lim.Until = now.Add(time.Minute)
		}
	}
	lim.SessionID = res.SessionID
	if lim.SessionID == "" {
		// An attempt kept from starting has no session: the one to resume
		// is the paused attempt's before it.
		if prev, ok := pauseOf(rec.Pause); ok {
			lim.SessionID = prev.SessionID
		}
	}
	n := rec.Pauses
	if n >= MaxPauses {
		msg := fmt.Sprintf("paused %d times in a row by usage limits; the last: %s", n, lim.Message)
		rec.Error = msg
		rec.Pause, rec.Pauses = nil, 0
		return ending{task.Fail, eventlog.TaskFailed}, map[string]any{"error": msg}
	}
	rec.Pauses = n + 1
	rec.Pause = task.Object(asValue(lim))
	rec.RetryAt = lim.Until
	rec.Error = res.Error
	info := map[string]any{"message": lim.Message, "profile": lim.Profile, "since": task.Stamp(now), "until": task.Stamp(lim.Until)}
	if !lim.ResetsAt.IsZero() {
		info["resetsAt"] = task.Stamp(lim.ResetsAt)
	}
	if res.SessionID != "" {
		info["sessionId"] = res.SessionID
	}
	return ending{task.Pause, eventlog.TaskPaused}, info
}

// ResumeAfterLimit is what a paused claude session is told when it is
// resumed.
const ResumeAfterLimit = "The usage limit that stopped you has reset. Carry on with your task from where you left off, and end your answer as the task asks."

// ResumeSession returns the session a paused task's agent had when its
// usage limit stopped it (metadata.taskd.pause.sessionId), to resume.
func ResumeSession(t *taskfile.Task) string {
	lim, _ := PauseOf(t)
	return lim.SessionID
}

// The answers to a question about denied tool calls (hitl kind
// "permission").
const (
	AnswerAllow     = "allow"      // allow exactly the refused calls (metadata.taskd.tools) and continue the session
	AnswerAllowTool = "allow-tool" // allow the refused calls' whole tools and continue the session
	AnswerRetry     = "retry"      // run again as the file now says (a person changed permissionMode or tools)
	AnswerFail      = "fail"       // the task fails
	AnswerLeave     = "leave"      // keep the question open
)

// askAboutDenials records, in the task's record rec, the question to a
// person about the tool calls res was refused: which, what each answer
// grants — allow: exactly those calls (each call's rule, offered when
// every call has one), allow-tool: their whole tools —, the session the
// grant continues, and the fix (metadata.taskd.hitl, kind "permission").
// It returns the event's data; the task's error (agent.DeniedText) is the
// record's, set by the caller.
func askAboutDenials(rec *task.Record, res agent.Result, logs string) map[string]any {
	var tools, rules, loose []string
	for _, d := range res.Denials {
		if !slices.Contains(tools, d.Tool) {
			tools = append(tools, d.Tool)
		}
		switch {
		case d.Rule == "":
			loose = append(loose, deniedCall(d))
		case !slices.Contains(rules, d.Rule):
			rules = append(rules, d.Rule)
		}
	}
	options := []string{AnswerAllowTool, AnswerRetry, AnswerFail, AnswerLeave}
	var offer string
	if len(loose) == 0 {
		options = append([]string{AnswerAllow}, options...)
		offer = fmt.Sprintf("Answer allow to allow exactly %s, or allow-tool to allow all of %s", strings.Join(rules, ", "), strings.Join(tools, ", "))
	} else {
		offer = fmt.Sprintf("No rule allows exactly %s; answer allow-tool to allow all of %s", strings.Join(loose, ", "), strings.Join(tools, ", "))
		rules = nil
	}
	goOn := "; it runs again"
	if res.SessionID != "" {
		goOn = " and continue its session"
	}
	reason := fmt.Sprintf("%s, so it did not do all it was asked. %s (metadata.taskd.tools)%s; "+
		"or set metadata.taskd.permissionMode (acceptEdits lets it edit files) and answer retry; logs: %s",
		agent.DeniedText(res.Denials), offer, goOn, logs)
	h := taskfile.NewObject()
	h.Set("kind", "permission")
	h.Set("reason", reason)
	h.Set("options", options)
	h.Set("denied", tools)
	if len(rules) > 0 {
		h.Set("grant", rules)
	}
	if res.SessionID != "" {
		h.Set("session", res.SessionID)
	}
	rec.Hold = h
	info := map[string]any{"reason": reason, "kind": "permission", "denied": tools, "options": options}
	if len(rules) > 0 {
		info["grant"] = rules
	}
	return info
}

// deniedCall is a refused call as a person reads it.
func deniedCall(d agent.Denial) string {
	if d.Target == "" {
		return d.Tool
	}
	return d.Tool + " (" + d.Target + ")"
}
