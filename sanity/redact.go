package sanity

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/rulebook"
)

// Redacted is what a secret value is replaced with.
const Redacted = "[REDACTED]"

// minSecretLen is the shortest secret value the suite looks for and
// redacts: a shorter one ("csi", "admin") is a word a driver prints for
// other reasons, and replacing it inside other text ("rbd.csi.ceph.com")
// would mangle the report. The report says which values were not looked for.
const minSecretLen = 6

// secretForms are the encodings of a value the suite looks for: the ways a
// driver or one of the suite's own writers may spell it.
var secretForms = []struct {
	name   string
	encode func(string) string
}{
	{"as written", func(v string) string { return v }},
	{"Go-quoted", func(v string) string { q := strconv.Quote(v); return q[1 : len(q)-1] }},
	{"Go-quoted ASCII", func(v string) string { q := strconv.QuoteToASCII(v); return q[1 : len(q)-1] }},
	{"JSON", func(v string) string { return jsonInner(v, false) }},
	{"JSON with HTML escapes", func(v string) string { return jsonInner(v, true) }},
	{"XML", func(v string) string { var b strings.Builder; _ = xml.EscapeText(&b, []byte(v)); return b.String() }},
	{"HTML", html.EscapeString},
	{"Markdown cell", func(v string) string { return strings.ReplaceAll(v, "|", `\|`) }},
	{"printable-escaped", rulebook.Printable},
	{"URL query", url.QueryEscape},
	{"URL path", url.PathEscape},
	{"base64", func(v string) string { return base64.StdEncoding.EncodeToString([]byte(v)) }},
	{"base64 unpadded", func(v string) string { return base64.RawStdEncoding.EncodeToString([]byte(v)) }},
	{"base64url", func(v string) string { return base64.RawURLEncoding.EncodeToString([]byte(v)) }},
	{"hex", func(v string) string { return hex.EncodeToString([]byte(v)) }},
	{"HEX", func(v string) string { return strings.ToUpper(hex.EncodeToString([]byte(v))) }},
}

func jsonInner(v string, escapeHTML bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(v)
	s := strings.TrimSpace(b.String())
	return s[1 : len(s)-1]
}

// secretSet is what one run looks for and redacts: every form of every
// secret value at least minSecretLen long, and of the sentinel.
type secretSet struct {
	replacer *strings.Replacer
	forms    []secretForm // longest first
	scope    Redaction
}

type secretForm struct{ name, value string }

// Redaction says what a run looked for in the driver's answers and removed
// from everything it printed or wrote, and what it did not look for.
type Redaction struct {
	// LookedFor are the secrets whose values were looked for and redacted,
	// by key, with the length of the value.
	LookedFor []string `json:"lookedFor"`
	// NotLookedFor are the secrets too short to tell from other text.
	NotLookedFor []string `json:"notLookedFor,omitempty"`
	// Forms are the encodings of each value looked for.
	Forms []string `json:"forms"`
}

// String is the report's sentence about redaction.
func (r Redaction) String() string {
	s := fmt.Sprintf("looked for and redacted: %s, each %s", strings.Join(r.LookedFor, ", "), strings.Join(r.Forms, ", "))
	if len(r.NotLookedFor) > 0 {
		s += fmt.Sprintf("; not looked for (shorter than %d characters, too short to tell from other text): %s", minSecretLen, strings.Join(r.NotLookedFor, ", "))
	}
	return s
}

// newSecretSet builds the set of a run from its valid secrets.
func newSecretSet(secrets map[string]string) *secretSet {
	set := &secretSet{}
	named := []secretForm{{"sentinel", sentinel}}
	for _, k := range sortedKeys(secrets) {
		v := secrets[k]
		if len(v) < minSecretLen {
			set.scope.NotLookedFor = append(set.scope.NotLookedFor, fmt.Sprintf("%s (%d characters)", k, len(v)))
			continue
		}
		named = append(named, secretForm{k, v})
	}
	for _, n := range named {
		if n.name == "sentinel" {
			set.scope.LookedFor = append(set.scope.LookedFor, "the suite's sentinel")
		} else {
			set.scope.LookedFor = append(set.scope.LookedFor, fmt.Sprintf("%s (%d characters)", n.name, len(n.value)))
		}
		values := []secretForm{n}
		if n.name != "sentinel" {
			// The variants ERR-004 sends are nearly the secret: a driver
			// that echoes the value it got must not print them.
			misses, _ := nearMisses(n.value)
			for _, m := range misses {
				if len(m.value) >= minSecretLen {
					values = append(values, secretForm{n.name + " (a near miss of it)", m.value})
				}
			}
		}
		seen := map[string]bool{}
		for _, v := range values {
			for _, f := range secretForms {
				if e := f.encode(v.value); e != "" && !seen[e] {
					seen[e] = true
					set.forms = append(set.forms, secretForm{v.name, e})
				}
			}
		}
	}
	for _, f := range secretForms {
		set.scope.Forms = append(set.scope.Forms, f.name)
	}
	set.scope.Forms = append(set.scope.Forms, "and the variants ERR-004 sends (a character changed, truncated, one character added, other case, spaces) in the same forms")
	// Longest first, so that a form containing another is replaced whole.
	slices.SortStableFunc(set.forms, func(a, b secretForm) int { return len(b.value) - len(a.value) })
	var pairs []string
	for _, f := range set.forms {
		pairs = append(pairs, f.value, Redacted)
	}
	set.replacer = strings.NewReplacer(pairs...)
	return set
}

// echoed names the secrets (the sentinel as "sentinel") one of whose forms
// appears in s.
func (set *secretSet) echoed(s string) []string {
	var out []string
	for _, f := range set.forms {
		if !slices.Contains(out, f.name) && strings.Contains(s, f.value) {
			out = append(out, f.name)
		}
	}
	slices.Sort(out)
	return out
}

// secrets is the set of the running suite, installed once per run before
// anything is sent; every text the suite keeps, prints or writes passes
// through redact.
var secrets atomic.Pointer[secretSet]

func installRedactor(cfg map[string]string) *secretSet {
	set := newSecretSet(cfg)
	secrets.Store(set)
	return set
}

// redact removes every form of every known secret value from s.
func redact(s string) string {
	if set := secrets.Load(); set != nil {
		return set.replacer.Replace(s)
	}
	return s
}

// echoedSecrets names the secrets whose value appears in s in any form.
func echoedSecrets(s string) []string {
	if set := secrets.Load(); set != nil {
		return set.echoed(s)
	}
	return nil
}

// clean makes a text safe to print and keep: secrets redacted, then every
// unprintable byte escaped (rulebook.Printable).
func clean(s string) string { return rulebook.Printable(redact(s)) }

// show quotes a driver-supplied string for a message: redacted, then
// Go-quoted, so that control bytes, invalid UTF-8 and quotes cannot break
// out of it.
func show(s string) string { return strconv.Quote(redact(s)) }

// showAll is show for each element, joined for a message.
func showAll(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = show(s)
	}
	return strings.Join(out, ", ")
}

// rawMessage is the driver's error message as sent, for the echo checks
// only; everything that is kept or printed uses errText.
func rawMessage(err error) string {
	if err == nil {
		return ""
	}
	var h *hungError
	if errors.As(err, &h) {
		return h.Error()
	}
	if st, ok := status.FromError(err); ok {
		return st.Message()
	}
	return err.Error()
}

// errText is an error's message for a sentence: the suite's own errors as
// they are, a driver's message redacted and quoted.
func errText(err error) string {
	var own suiteError
	if errors.As(err, &own) {
		return err.Error()
	}
	return show(rawMessage(err))
}

// suiteError marks errors whose text the suite wrote itself.
type suiteError interface{ suiteMade() }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
