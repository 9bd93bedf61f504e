package subagent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// The result contract /converge reads: each child's result.json (its last
// attempt) gives success, summary, answer, confidence and output; the
// child's final JSON object may list the files it changed as "files" (an
// array of paths); the finish time is the task file's
// metadata.taskd.finishedAt.

// loadInputs reads the persisted results of the children ids of dir.
func loadInputs(dir *taskfile.Dir, ids []string) ([]convergeInput, error) {
	var out []convergeInput
	for _, id := range ids {
		c, err := dir.Read(id)
		if err != nil {
			return nil, fmt.Errorf("read child %s: %w", id, err)
		}
		m := c.Metadata.Object("taskd")
		rec := task.RecordOf(c)
		in := convergeInput{ID: id}
		in.Name, _ = m.String("name")
		in.State, in.FinishedAt = rec.State, rec.FinishedAt
		if res, ok := childResult(dir.Path(), c); ok {
			in.Res = res
		} else {
			in.Res.Summary, _ = rec.Result.String("summary")
			in.Res.Error = rec.Error
		}
		if in.State != task.Succeeded {
			in.Res.Success = false
		}
		in.Files = resultFiles(in.Res)
		out = append(out, in)
	}
	return out, nil
}

// resultFiles returns the "files" array of the final JSON object of a
// result's output.
func resultFiles(res agent.Result) []string {
	obj := agent.LastObject([]byte(res.Output), agent.HasBoolSuccess)
	if obj == nil {
		return nil
	}
	var v struct {
		Files []string `json:"files"`
	}
	json.Unmarshal(obj, &v)
	return v.Files
}

// toleranceOf reads the parent's metadata.taskd.convergeTolerance: a number
// (absolute) or "N%" (relative to the larger of two answers). None is 0:
// numbers must be equal.
func toleranceOf(t *taskfile.Task) (tolerance, error) {
	v, ok := t.Metadata.Object("taskd").Get("convergeTolerance")
	if !ok || v == nil {
		return tolerance{}, nil
	}
	return parseTolerance(agent.AsText(v))
}

func parseTolerance(s string) (tolerance, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f < 0 {
			return tolerance{}, fmt.Errorf("tolerance %q: write a number ≥ 0 (absolute) or a percentage such as \"1%%\"", s)
		}
		return tolerance{Rel: f / 100}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return tolerance{}, fmt.Errorf("tolerance %q: write a number ≥ 0 (absolute) or a percentage such as \"1%%\"", s)
	}
	return tolerance{Abs: f}, nil
}

// Output files of a convergence, in the run folder.
const (
	convergedJSON  = "converged.json"
	convergedMD    = "converged.md"
	convergedDelta = "converged.jsonl"
)

// writeConverged writes cv to runDir, inside the list directory base:
// converged.json always, and converged.md (markdown) or converged.jsonl
// (delta_batch) for those formats. It returns the file of the requested
// format and its content.
func writeConverged(base, runDir string, cv *converged) (path string, content []byte, err error) {
	data, err := json.MarshalIndent(cv, "", "  ")
	if err != nil {
		return "", nil, err
	}
	data = append(data, '\n')
	path, content = filepath.Join(runDir, convergedJSON), data
	if err := fsroot.WriteFile(base, path, data); err != nil {
		return "", nil, err
	}
	switch cv.OutputFormat {
	case "markdown":
		path, content = filepath.Join(runDir, convergedMD), []byte(convergedMarkdown(cv))
	case "delta_batch":
		path, content = filepath.Join(runDir, convergedDelta), convergedDeltas(cv)
	default:
		return path, content, nil
	}
	return path, content, fsroot.WriteFile(base, path, content)
}

// convergedMarkdown renders cv for people and agents.
func convergedMarkdown(cv *converged) string {
	var b strings.Builder
	verdict := "succeeded"
	if !cv.Success {
		verdict = "failed: " + cv.Reason
	}
	fmt.Fprintf(&b, "# Converged result (%s over tasks %s)\n\n%s\n", cv.Strategy, strings.Join(cv.SubagentIDs, ", "), verdict)
	if cv.Winner != "" {
		fmt.Fprintf(&b, "\nWinner: task %s\n", cv.Winner)
	}
	if cv.Answer != nil {
		fmt.Fprintf(&b, "\nAnswer: %s\n", agent.AsText(cv.Answer))
	}
	b.WriteString("\n| task | name | state | role | answer | confidence | summary |\n|---|---|---|---|---|---|---|\n")
	for _, c := range cv.Children {
		conf := ""
		if c.Confidence != nil {
			conf = strconv.FormatFloat(*c.Confidence, 'g', -1, 64)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", c.ID, c.Name, c.State, c.Role,
			mdCell(c.Answer), conf, mdCell(agent.Truncate(c.Summary, 200)))
	}
	for i, c := range cv.Conflicts {
		if i == 0 {
			b.WriteString("\n## Conflicts\n\n")
		}
		fmt.Fprintf(&b, "%d. %s %s between %s\n", i+1, c.Kind, c.Key, strings.Join(c.Children, ", "))
	}
	for i, r := range cv.Resolutions {
		if i == 0 {
			b.WriteString("\n## Resolutions\n\n")
		}
		fmt.Fprintf(&b, "- conflict %d: task %s wins (%s); overridden: %s\n", r.Conflict+1, r.Winner, r.Method, strings.Join(r.Overridden, ", "))
	}
	for _, c := range cv.Children {
		if c.Output != "" {
			fmt.Fprintf(&b, "\n## Task %s (%s)\n\n%s\n", c.ID, c.Role, c.Output)
		}
	}
	return b.String()
}

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// convergedDeltas renders cv as a delta batch: one JSON object a line, a
// batch header first, then one delta for each child whose result was
// accepted (merged, agreed, winner), with what was overridden.
func convergedDeltas(cv *converged) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]any{"type": "batch", "strategy": cv.Strategy, "success": cv.Success, "answer": cv.Answer,
		"subagent_ids": cv.SubagentIDs, "conflict_count": len(cv.Conflicts), "resolution_count": len(cv.Resolutions)})
	overridden := map[string][]string{}
	for _, r := range cv.Resolutions {
		key := cv.Conflicts[r.Conflict].Key
		for _, id := range r.Overridden {
			overridden[id] = append(overridden[id], cv.Conflicts[r.Conflict].Kind+":"+key)
		}
	}
	for _, c := range cv.Children {
		switch c.Role {
		case "merged", "agreed", "winner":
		default:
			continue
		}
		d := map[string]any{"type": "delta", "source": c.ID, "name": c.Name, "summary": c.Summary}
		if c.Answer != "" {
			d["answer"] = c.Answer
		}
		if len(c.Files) > 0 {
			d["files"] = c.Files
		}
		if o := overridden[c.ID]; len(o) > 0 {
			d["overridden"] = o
		}
		enc.Encode(d)
	}
	return b.Bytes()
}
