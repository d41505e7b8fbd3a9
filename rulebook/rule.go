package rulebook

import (
	"fmt"
	"slices"

	"github.com/onsi/ginkgo/v2/types"
)

// Level says how much a rule weighs in the verdict, after RFC 2119: only MUST
// failures fail a run (and SHOULD failures in a strict run).
type Level string

// Levels.
const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
	Info   Level = "INFO"
)

// Rule is one conformance check: the unit of the verdict and of the report.
type Rule struct {
	// ID is stable across releases, e.g. CIDR-001.
	ID string `json:"id"`
	// Level is MUST, SHOULD or INFO.
	Level Level `json:"level"`
	// Title says what a conforming implementation does.
	Title string `json:"title"`
	// Spec quotes the text the rule enforces.
	Spec string `json:"spec"`
	// Source names where Spec comes from (a spec file, a proto, a KEP).
	Source string `json:"source,omitempty"`
	// Area groups related rules (cidr, errors, identity, ...).
	Area string `json:"area,omitempty"`
	// Labels are further selectors (ipv6, host-bits, destructive, ...).
	Labels []string `json:"labels,omitempty"`
	// RPCs are the RPCs the rule calls, when it is about a few of them.
	RPCs []string `json:"rpcs,omitempty"`
	// Always says the rule runs whatever is left of the run's time budget:
	// it reads what the run recorded, or undoes what it did. A suite's
	// Gate lets it through when the budget is spent.
	Always bool `json:"always,omitempty"`
	// OptIn, when set, is what a user gives to run the rule (a flag such
	// as --destructive): a run without it ends the rule as SKIP, which
	// does not keep the run from CONFORMS (SuiteOptions.OptedIn).
	OptIn string `json:"optIn,omitempty"`
}

// Tags are what a label filter selects a rule by besides its ID and level:
// its area, labels and RPCs, in that order.
func (r Rule) Tags() []string {
	var out []string
	if r.Area != "" {
		out = append(out, r.Area)
	}
	out = append(out, r.Labels...)
	return append(out, r.RPCs...)
}

// Selectors are the Ginkgo labels of the rule's specs: the ID, the level,
// then the tags. The ID is how a spec's result finds its rule.
func (r Rule) Selectors() []string {
	return append([]string{r.ID, string(r.Level)}, r.Tags()...)
}

// Text is the spec text of the rule: "[ID] title".
func (r Rule) Text() string { return fmt.Sprintf("[%s] %s", r.ID, r.Title) }

// Book is the table of one suite's rules, declared once: listing the rules,
// registering their spec bodies and folding a run's report all read it.
type Book struct {
	// Title names the suite in reports and in Ginkgo's output.
	Title string
	// Incomplete, when set, says why a rule's result keeps a run that
	// failed nothing from being called CONFORMS (e.g. a MUST rule that
	// could not run); "" when it does not. Nil: a run is never INCOMPLETE.
	Incomplete func(RuleResult) string

	rules []Rule
	index map[string]int
}

// New declares a book. It panics on a table that cannot be folded: an empty
// or repeated ID, an unknown level, a rule without title or spec text, or a
// tag that is also a rule ID (a spec's labels must name one rule).
func New(title string, rules ...Rule) *Book {
	b := &Book{Title: title, rules: slices.Clone(rules), index: map[string]int{}}
	for i, r := range rules {
		switch {
		case r.ID == "":
			panic(fmt.Sprintf("rulebook %s: rule %d has no ID", title, i))
		case r.Level != Must && r.Level != Should && r.Level != Info:
			panic(fmt.Sprintf("rulebook %s: rule %s has level %q", title, r.ID, r.Level))
		case r.Title == "" || r.Spec == "":
			panic(fmt.Sprintf("rulebook %s: rule %s needs a title and the spec text it enforces", title, r.ID))
		}
		if _, dup := b.index[r.ID]; dup {
			panic(fmt.Sprintf("rulebook %s: rule %s declared twice", title, r.ID))
		}
		b.index[r.ID] = i
	}
	for _, r := range rules {
		for _, t := range r.Tags() {
			if _, clash := b.index[t]; clash {
				panic(fmt.Sprintf("rulebook %s: rule %s has the tag %s, which is a rule ID", title, r.ID, t))
			}
		}
	}
	return b
}

// Rules returns every rule, in table order.
func (b *Book) Rules() []Rule { return slices.Clone(b.rules) }

// Len is the number of rules.
func (b *Book) Len() int { return len(b.rules) }

// Rule returns the rule with the ID.
func (b *Book) Rule(id string) (Rule, bool) {
	i, ok := b.index[id]
	if !ok {
		return Rule{}, false
	}
	return b.rules[i], true
}

// Select returns the rules a Ginkgo label filter selects, in table order;
// an empty filter selects every rule. No spec runs.
func (b *Book) Select(labelFilter string) ([]Rule, error) {
	if labelFilter == "" {
		return b.Rules(), nil
	}
	match, err := types.ParseLabelFilter(labelFilter)
	if err != nil {
		return nil, fmt.Errorf("label filter %q: %s", labelFilter, ansi.ReplaceAllString(err.Error(), ""))
	}
	var out []Rule
	for _, r := range b.rules {
		if match(r.Selectors()) {
			out = append(out, r)
		}
	}
	return out, nil
}
