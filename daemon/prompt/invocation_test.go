package prompt_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/prompt"
)

func TestInvoke(t *testing.T) {
	plan := `---
parallel:
  - /plan-a $ARGUMENTS
  - command: plan-b
    arguments: the default
  - "look at $ARGUMENTS yourself"
return:
  - compare the plans for $ARGUMENTS
  - /review {model:opus} $ARGUMENTS
  - /subtask {as:x} summarise $ARGUMENTS
loop: {max: 2, until: "$ARGUMENTS is planned"}
---
Plan $ARGUMENTS.`
	cf, err := prompt.ParseCommandFile("plan", []byte(plan))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args           string
		block                string
		body                 string
		parallel, returns    []string
		until, wantErrorPart string
	}{
		{name: "arguments fill every item", args: "the cache",
			body:     "Plan the cache.",
			parallel: []string{"/plan-a the cache", "/plan-b the default", "look at the cache yourself"},
			returns:  []string{"compare the plans for the cache", "/review {model:opus} the cache", "/subtask {as:x} summarise the cache"},
			until:    "the cache is planned"},
		{name: "pipe arguments go to parallel then return commands", args: "the cache || option A || option B || src/cache",
			body:     "Plan the cache.",
			parallel: []string{"/plan-a option A", "/plan-b option B", "look at the cache yourself"},
			returns:  []string{"compare the plans for the cache", "/review {model:opus} src/cache", "/subtask {as:x} summarise the cache"},
			until:    "the cache is planned"},
		{name: "fewer parts than commands", args: "the cache || option A",
			body:     "Plan the cache.",
			parallel: []string{"/plan-a option A", "/plan-b the default", "look at the cache yourself"},
			returns:  []string{"compare the plans for the cache", "/review {model:opus} the cache", "/subtask {as:x} summarise the cache"},
			until:    "the cache is planned"},
		{name: "quoted || is text", args: `"a || b"`,
			body:     `Plan "a || b".`,
			parallel: []string{`/plan-a "a || b"`, "/plan-b the default", `look at "a || b" yourself`},
			returns:  []string{`compare the plans for "a || b"`, `/review {model:opus} "a || b"`, `/subtask {as:x} summarise "a || b"`},
			until:    `"a || b" is planned`},
		{name: "a part left over", args: "a || b || c || d || e", wantErrorPart: "the arguments have 5 parts separated by ||, one for the command and one for each of its parallel and return commands, which are 3"},
		{name: "the block goes over the frontmatter", args: "x", block: "{return:check $ARGUMENTS}",
			body:     "Plan x.",
			parallel: []string{"/plan-a x", "/plan-b the default", "look at x yourself"},
			returns:  []string{"check x"},
			until:    "x is planned"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var block prompt.Overrides
			if tt.block != "" {
				if block, err = prompt.ParseOverrides(tt.block); err != nil {
					t.Fatal(err)
				}
			}
			inv, err := cf.Invoke(block, tt.args)
			if tt.wantErrorPart != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrorPart) {
					t.Fatalf("Invoke(%q) error %v, want %q", tt.args, err, tt.wantErrorPart)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if inv.Body != tt.body || !reflect.DeepEqual(inv.Overrides.Parallel, tt.parallel) || !reflect.DeepEqual(inv.Overrides.Return, tt.returns) || inv.Overrides.Loop.Until != tt.until {
				t.Errorf("Invoke(%q)\n got body %q parallel %q return %q until %q\nwant body %q parallel %q return %q until %q",
					tt.args, inv.Body, inv.Overrides.Parallel, inv.Overrides.Return, inv.Overrides.Loop.Until, tt.body, tt.parallel, tt.returns, tt.until)
			}
		})
	}
	if cf.Overrides.Parallel[0] != "/plan-a $ARGUMENTS" {
		t.Errorf("Invoke changed the command file: %q", cf.Overrides.Parallel)
	}
}
