package prompt_test

import (
	"encoding/json"
	"fmt"

	"github.com/taskd/taskd/daemon/prompt"
)

func ExampleParse() {
	s, err := prompt.Parse(`/read project/requirements.md
/push name=research-a "Research approach A"
/run
Analyze the requirements above.
/push name=implement "Implement the chosen approach"`, prompt.ParseOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range s.Leading {
		fmt.Printf("before, line %d: %s\n", st.Line, st.Cmd)
	}
	fmt.Printf("content: %q\n", s.Content)
	for _, st := range s.Trailing {
		fmt.Printf("after, line %d: %s\n", st.Line, st.Cmd)
	}
	// Output:
	// before, line 1: /read project/requirements.md
	// before, line 2: /push name=research-a "Research approach A"
	// before, line 3: /run
	// content: "Analyze the requirements above."
	// after, line 5: /push name=implement "Implement the chosen approach"
}

func ExampleParse_error() {
	_, err := prompt.Parse("/read notes.md\n/pus name=x \"y\"\nDo it.", prompt.ParseOptions{})
	fmt.Println(err)
	// Output:
	// line 2: "/pus name=x \"y\"": unknown command /pus (known: /read, /push, /run, /subtask, /delegate, /handoff, /converge and command files); did you mean /push?
}

func ExampleParseOverrides() {
	o, err := prompt.ParseOverrides(`{until:all tests pass && loop:5 && return:review the diff || /ship}`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fields, _ := json.Marshal(o.Fields())
	fmt.Println(string(fields))
	fmt.Println(o)
	// Output:
	// {"loop":{"max":5,"until":"all tests pass"},"return":["review the diff","/ship"]}
	// {loop:5 && until:all tests pass && return:review the diff || /ship}
}

func ExampleSubstituteResults() {
	results := map[string]string{"plan-a": "use JWT", "plan-b": "use sessions"}
	out, err := prompt.SubstituteResults("Compare $RESULT[plan-a] with $RESULT[plan-b].", func(name string) (string, bool) {
		r, ok := results[name]
		return r, ok
	})
	fmt.Println(out, err)
	_, err = prompt.SubstituteResults("Use $RESULT[plan-c].", func(string) (string, bool) { return "", false })
	fmt.Println(err)
	// Output:
	// Compare use JWT with use sessions. <nil>
	// line 1: "$RESULT[plan-c]": no result is named "plan-c"; a result gets its name from as:NAME or /push name=NAME
}

func ExampleParseDelegateArgs() {
	d, err := prompt.ParseDelegateArgs([]string{"write", "the", "tests", "--agent-type", "tester", "--tools", "Read,Bash"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q %s %v %q (mode %q)\n", d.Task, d.AgentType, d.Timeout, d.Tools, d.PermissionMode)
	fmt.Println(d)
	// Output:
	// "write the tests" tester 5m0s ["Read" "Bash"] (mode "")
	// /delegate "write the tests" --agent-type tester --timeout 5m0s --tools Read,Bash
}
