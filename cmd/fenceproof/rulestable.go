package main

import (
	"fmt"
	"strings"

	"github.com/fenceproof/fenceproof/driver/fault"
	"github.com/fenceproof/fenceproof/rulebook"
	"github.com/fenceproof/fenceproof/sanity"
)

// ruleTableMarkdown is the README's rule table: every rule of the suite, its level
// and the narrowest fault of the reference driver that proves it can fail
// (from the fault table's proofs), or how it is proven otherwise.
func ruleTableMarkdown(rules []sanity.Rule) string {
	proven := fault.ProvenBy()
	var b strings.Builder
	b.WriteString("| rule | level | what a conforming driver does | fault that fails it |\n|---|---|---|---|\n")
	for _, r := range rules {
		how := ""
		if ps := proven[r.ID]; len(ps) > 0 {
			how = "`" + ps[0] + "`"
		} else if o, ok := fault.ProvenOtherwise[r.ID]; ok {
			how = o
		} else if r.Level == rulebook.Info {
			how = "— (observations only)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.ID, r.Level, rulebook.MarkdownCell(r.Title), how)
	}
	return b.String()
}
