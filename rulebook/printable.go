package rulebook

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable escapes what a terminal or a report viewer would act on instead
// of showing: NUL, control and escape bytes (ESC, CR, DEL, C1), invisible
// format characters (bidirectional overrides, zero-width spaces) and bytes
// that are not UTF-8, as \xNN or \uNNNN. Newlines and tabs are kept; every
// printable character, ASCII or not, is left as it is.
func Printable(s string) string {
	if isPrintable(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t' || r == ' ' || unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

func isPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			return strings.IndexFunc(s, func(r rune) bool {
				return r == utf8.RuneError || (r != '\n' && r != '\t' && r != ' ' && !unicode.IsPrint(r))
			}) < 0
		}
	}
	return true
}

// shown is a copy of r with every string a report shows passed through
// Printable, for the Markdown and HTML writers (JSON escapes on its own).
func (r *Result) shown() *Result {
	c := *r
	c.Endpoint, c.SetupError = Printable(r.Endpoint), Printable(r.SetupError)
	c.IncompleteBecause = printableAll(r.IncompleteBecause)
	c.Facts = make([]Fact, len(r.Facts))
	for i, f := range r.Facts {
		c.Facts[i] = Fact{Name: Printable(f.Name), Value: Printable(f.Value)}
	}
	c.Rules = make([]RuleResult, len(r.Rules))
	for i, rr := range r.Rules {
		rr.Reason, rr.Incomplete, rr.Notes = Printable(rr.Reason), Printable(rr.Incomplete), printableAll(rr.Notes)
		cases := make([]CaseResult, len(rr.Cases))
		for j, cs := range rr.Cases {
			cs.Name, cs.Message = Printable(cs.Name), Printable(cs.Message)
			cases[j] = cs
		}
		rr.Cases = cases
		c.Rules[i] = rr
	}
	return &c
}

func printableAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Printable(s)
	}
	return out
}
