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
	misses, untried := nearMisses("Secret9!")
	got := map[string]string{}
	for _, m := range misses {
		got[m.name] = m.value
	}
	for name, want := range map[string]string{
		"with its last character changed": "Secret9x", "truncated by its last character": "Secret9",
		"with one character added": "Secret9!x", "in swapped case": "sECRET9!", "in upper case": "SECRET9!",
		"in lower case": "secret9!", "with a trailing newline": "Secret9!\n", "with a leading space": " Secret9!",
	} {
		if got[name] != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	if len(untried) != 0 {
		t.Errorf("untried %v", untried)
	}
}

// TestNearMissesAreOtherSecretsAfterDecoding pins ERR-004's two "wrong
// secrets" that were the same key to the storage: only base64 padding
// changed. No variant sent decodes, under any common decoding, to the
// bytes of the valid value; each kind that had to drop one sends another
// and says so.
func TestNearMissesAreOtherSecretsAfterDecoding(t *testing.T) {
	for _, v := range []string{
		"AQBq5GxhAAAAABAAxHCsu9QjXj7YmTDnSaBwCg==", // a cephx key
		"QUJD",              // base64 without padding
		"0b7e5dAF",          // hexadecimal, mixed case
		"s3cr3t-value",      // plain, yet valid base64url
		"fenceproof.0b7e5d", // neither
	} {
		misses, untried := nearMisses(v)
		for _, m := range misses {
			if how := sameSecret(v, m.value); how != "" {
				t.Errorf("%q: %s (%q) is the same secret after %s decoding", v, m.name, m.value, how)
			}
		}
		var names []string
		for _, m := range misses {
			names = append(names, m.name)
		}
		for _, kind := range []string{"changed", "truncated", "added"} {
			if !strings.Contains(strings.Join(names, "|"), kind) {
				t.Errorf("%q: no near miss %s is sent (sent %v, untried %v)", v, kind, names, untried)
			}
		}
	}
	if sameSecret("AQBq5GxhAAAAABAAxHCsu9QjXj7YmTDnSaBwCg==", "AQBq5GxhAAAAABAAxHCsu9QjXj7YmTDnSaBwCg=") != "base64" {
		t.Error("a padding variant of a base64 key is not seen as the same key")
	}
	if sameSecret("0b7e5daf", "0B7E5DAF") != "hexadecimal" {
		t.Error("a case variant of a hexadecimal key is not seen as the same key")
	}
	if sameSecret("fenceproof.0b7e5d", "fenceproof.0b7e5d ") != "" {
		t.Error("a value no decoding reads was taken for the same secret as its whitespace variant")
	}
}
