package contract

import (
	"strings"
	"testing"
)

// TestRecordRoundTripAndDamage: an encoded record decodes intact; any
// change of one character of it is caught (damaged, or not a record).
func TestRecordRoundTripAndDamage(t *testing.T) {
	r := Record{Writer: "fp-run-b", Seq: 1732789000123456, Node: "kind-worker2", StartNs: 1732789000123456789}
	s := r.Encode()
	got, err := Decode(s)
	if err != nil || !got.Intact || got.Writer != r.Writer || got.Seq != r.Seq || got.Node != r.Node || got.StartNs != r.StartNs {
		t.Fatalf("Decode(%q) = %+v, %v", s, got, err)
	}
	if strings.ContainsAny(s, " \n") {
		t.Errorf("%q has a space or newline (refstore payloads and lines cannot)", s)
	}
	for i := range s {
		for _, c := range []byte{'0', '7', 'a', '|', '-'} {
			if s[i] == c {
				continue
			}
			bad := s[:i] + string(c) + s[i+1:]
			if d, err := Decode(bad); err == nil && d.Intact {
				t.Fatalf("changing byte %d to %q went unnoticed: %q decodes intact", i, c, bad)
			}
		}
	}
	if _, err := Decode("hello"); err == nil {
		t.Error("a non-record decoded")
	}
}
