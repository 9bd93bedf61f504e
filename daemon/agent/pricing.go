package agent

import "strings"

// While an agent runs, its cost so far is estimated from the tokens its
// stream reports, at list prices per million tokens, unless the agent
// reports its cost as it goes (opencode does); the cost recorded at the
// end is the agent's own (claude's total_cost_usd). A budget
// (maxCostUsd) is enforced against the estimate. Models not listed are
// priced as the dearest common tier below, so an estimate errs high.

type price struct{ input, output float64 } // US dollars per million tokens

// prices by a part of the model's name, first match wins.
var prices = []struct {
	match string
	price
}{
	{"haiku", price{1, 5}},
	{"sonnet", price{3, 15}},
	{"opus-4-1", price{15, 75}},
	{"opus-4-0", price{15, 75}},
	{"opus-4-2", price{15, 75}},
	{"opus", price{5, 25}},
	{"gpt-5-mini", price{0.25, 2}},
	{"gpt-5", price{1.25, 10}},
	{"o4-mini", price{1.1, 4.4}},
	{"gpt-4.1", price{2, 8}},
	{"o3", price{2, 8}},
}

// unknownPrice prices a model not listed.
var unknownPrice = price{5, 25}

// estimateCost is the list price of tokens t of model: cache reads at a
// tenth of the input price, cache writes at a quarter more.
func estimateCost(model string, t Tokens) float64 {
	p := unknownPrice
	model = strings.ToLower(model)
	for _, e := range prices {
		if strings.Contains(model, e.match) {
			p = e.price
			break
		}
	}
	in := float64(t.Input) + 0.1*float64(t.CacheRead) + 1.25*float64(t.CacheWrite)
	return (in*p.input + float64(t.Output)*p.output) / 1e6
}
