package sanity

import (
	"encoding/json"
	"html"
	"strconv"
	"strings"
	"testing"
)

// TestRedactionCoversEveryEncoding: a secret with quotes, backslashes and
// markup is redacted in every form a writer or a driver gives it, and so
// are the near misses ERR-004 sends.
func TestRedactionCoversEveryEncoding(t *testing.T) {
	const v = `k"e\\y<&>'|ü-0b7e5d`
	set := newSecretSet(map[string]string{"userKey": v})
	j, _ := json.Marshal(v)
	forms := []string{v, strconv.Quote(v), string(j), html.EscapeString(v), "sent " + v[:len(v)-1] + "x"}
	for _, f := range forms {
		if got := set.replacer.Replace("message: " + f + " end"); strings.Contains(got, v[:len(v)-1]) || !strings.Contains(got, Redacted) {
			t.Errorf("form %q is not redacted: %q", f, got)
		}
		if e := set.echoed(f); len(e) == 0 {
			t.Errorf("form %q is not seen as an echo", f)
		}
	}
}

// TestShortSecretsAreNeitherLookedForNorRedacted pins the mangling of
// "rbd.csi.ceph.com" when the userID was "csi": a value too short to tell
// from other text is left alone, and the report says so.
func TestShortSecretsAreNeitherLookedForNorRedacted(t *testing.T) {
	set := newSecretSet(map[string]string{"userID": "csi", "userKey": "a-long-enough-key"})
	if got := set.replacer.Replace("driver rbd.csi.ceph.com"); got != "driver rbd.csi.ceph.com" {
		t.Errorf("a short value was redacted inside other text: %q", got)
	}
	if s := set.scope.String(); !strings.Contains(s, "userID (3 characters)") || !strings.Contains(s, "not looked for") {
		t.Errorf("the report does not say userID was not looked for: %s", s)
	}
}

func TestNearMisses(t *testing.T) {
	misses, untried := nearMisses("Secret9")
	got := map[string]string{}
	for _, m := range misses {
		got[m.name] = m.value
	}
	for name, want := range map[string]string{
		"with its last character changed": "Secretx", "truncated by its last character": "Secret",
		"with one character added": "Secret9x", "in different case": "sECRET9",
	} {
		if got[name] != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	if len(untried) != 0 {
		t.Errorf("untried %v", untried)
	}
	if _, untried := nearMisses("123456"); len(untried) != 1 || !strings.Contains(untried[0], "no letters") {
		t.Errorf("a value without letters: untried %v", untried)
	}
}
