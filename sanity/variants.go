package sanity

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// The variation spaces of the credential and parameter rules (ERR-002,
// ERR-003, ERR-004, ERR-005, ERR-007): instead of one made-up value, every
// request is spoiled in every way a comparison that checks too little lets
// through. A valid value under another key (a made-up one, the right one in
// other case or with a space) leaves the right key missing; case and
// whitespace variants and near misses of a valid value (last character
// changed, truncated, one added) are wrong values. A secret variant that a
// common decoding of secrets (base64, which ignores padding, whitespace and
// unused bits; hexadecimal, which ignores case) turns into the same bytes
// as the valid value is the same secret to the storage: it is not sent,
// and the report says so, naming another variant of the same kind that
// differs after decoding when there is one.

// variant is one way of spoiling a request, by name: the name says what was
// done, never a value.
type variant struct {
	name  string
	value string
}

// keyVariants are other keys a valid value may be sent under: a made-up
// key, the key in other case, the key with a space.
func keyVariants(key string) []variant {
	out := []variant{{"under a made-up key", "fenceproof-other-" + key}}
	for _, v := range caseVariants(key) {
		out = append(out, variant{"under its key " + v.name, v.value})
	}
	return append(out, variant{"under its key with a trailing space", key + " "}, variant{"under its key with a leading space", " " + key})
}

// caseVariants are a value in other case: letters swapped, upper, lower,
// each when it differs from the value and from the ones before.
func caseVariants(v string) []variant {
	var out []variant
	seen := map[string]bool{v: true}
	for _, c := range []variant{{"in swapped case", swapCase(v)}, {"in upper case", strings.ToUpper(v)}, {"in lower case", strings.ToLower(v)}} {
		if !seen[c.value] {
			seen[c.value] = true
			out = append(out, c)
		}
	}
	return out
}

// valueVariants are the wrong values close to a valid one, by kind, each
// kind with its candidates in order: the first that keep is sent.
func valueVariants(v string) [][]variant {
	kinds := [][]variant{
		lastChanged(v),
		truncated(v),
		{{"with one character added", v + "x"}, {"with one character added", v + "A"}, {"with one character added", v + "0"}},
		{{"with a leading space", " " + v}}, {{"with a trailing space", v + " "}}, {{"with a trailing newline", v + "\n"}}, {{"with a tab inside", insertAt(v, len(v)/2, "\t")}},
	}
	for _, c := range caseVariants(v) {
		kinds = append(kinds, []variant{c})
	}
	return kinds
}

// lastChanged are candidates for the last character changed: the last one,
// then each one before it, each to a few other characters.
func lastChanged(v string) []variant {
	var out []variant
	for i := len(v) - 1; i >= 0 && len(out) < 12; i-- {
		for _, c := range "xyA0" {
			if byte(c) != v[i] {
				name := "with its last character changed"
				if i < len(v)-1 {
					name = fmt.Sprintf("with its character %d of %d changed", i+1, len(v))
				}
				out = append(out, variant{name, v[:i] + string(c) + v[i+1:]})
			}
		}
	}
	return out
}

// truncated are candidates for the value cut short: by its last
// character, then by more.
func truncated(v string) []variant {
	var out []variant
	for n := 1; n < len(v) && n <= 4; n++ {
		name := "truncated by its last character"
		if n > 1 {
			name = fmt.Sprintf("truncated by its last %d characters", n)
		}
		out = append(out, variant{name, v[:len(v)-n]})
	}
	return out
}

func insertAt(v string, i int, s string) string { return v[:i] + s + v[i:] }

// swapCase turns upper-case ASCII letters to lower case and back.
func swapCase(v string) string {
	b := []byte(v)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

// secretDecodings are the common decodings of a secret value: what a
// storage may do to it before comparing. Each returns false when the value
// does not decode.
var secretDecodings = []struct {
	name   string
	decode func(string) ([]byte, bool)
}{
	{"base64", func(s string) ([]byte, bool) {
		s = strings.TrimRight(strings.Map(dropSpace, s), "=")
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(s); err == nil {
				return b, true
			}
		}
		return nil, false
	}},
	{"hexadecimal", func(s string) ([]byte, bool) {
		b, err := hex.DecodeString(strings.Map(dropSpace, s))
		return b, err == nil
	}},
}

func dropSpace(r rune) rune {
	if unicode.IsSpace(r) {
		return -1
	}
	return r
}

// sameSecret names the decoding under which two values are the same
// secret, or "".
func sameSecret(a, b string) string {
	if a == b {
		return "as written"
	}
	for _, d := range secretDecodings {
		x, okA := d.decode(a)
		y, okB := d.decode(b)
		if okA && okB && string(x) == string(y) {
			return d.name
		}
	}
	return ""
}

// nearMisses are the wrong values of a secret that are different secrets to
// the driver, one per kind, and what could not be sent, with why.
func nearMisses(v string) (out []variant, untried []string) {
	for _, kind := range valueVariants(v) {
		var same []string
		for _, c := range kind {
			if how := sameSecret(v, c.value); how != "" {
				same = append(same, fmt.Sprintf("%s is the same key after %s decoding", c.name, how))
				continue
			}
			out = append(out, c)
			if len(same) > 0 {
				untried = append(untried, fmt.Sprintf("%s: sent %s instead", strings.Join(same, ", "), c.name))
			}
			same = nil
			break
		}
		if len(same) > 0 {
			untried = append(untried, strings.Join(same, ", ")+": not sent")
		}
	}
	return out, untried
}

// paramMisses are the wrong values of a parameter: every variant, none
// dropped (a parameter names a thing; it is not decoded).
func paramMisses(v string) []variant {
	out := []variant{{"a made-up value", "fenceproof-no-such-" + v}}
	for _, kind := range valueVariants(v) {
		if len(kind) > 0 && kind[0].value != "" && kind[0].value != v {
			out = append(out, kind[0])
		}
	}
	return out
}

// swappedValues are the values of two keys swapped, for each pair of keys
// whose values differ.
func swappedValues(m map[string]string) []map[string]string {
	keys := slices.Sorted(maps.Keys(m))
	var out []map[string]string
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			if m[a] != m[b] {
				c := maps.Clone(m)
				c[a], c[b] = m[b], m[a]
				out = append(out, c)
			}
		}
	}
	return out
}
