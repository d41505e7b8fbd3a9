package restrict

import (
	"testing"
	"unicode"

	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
)

// TestUpperIsNTFSs: the validator's upper-case table (Unicode's simple
// mapping less the characters NTFS keeps) equals, on every UTF-16 code
// unit, the $UpCase table the host model reads from a real volume.
func TestUpperIsNTFSs(t *testing.T) {
	for r := rune(0); r <= 0xFFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		if got, want := string(UpperNTFS(r)), hostmodel.Upper(string(r)); got != want {
			t.Errorf("U+%04X: validator %U, NTFS %U", r, []rune(got)[0], []rune(want)[0])
		}
	}
}

// TestDisagreements: the characters where Go's Unicode tables and NTFS
// differ include the dotless i and long s, and a character outside
// the BMP; NTFS never maps outside the BMP.
func TestDisagreements(t *testing.T) {
	d := DisagreeWithUnicode()
	have := map[rune]bool{}
	for _, r := range d {
		have[r] = true
		if UpperNTFS(r) == unicode.ToUpper(r) {
			t.Errorf("%U listed but both map it to %U", r, UpperNTFS(r))
		}
	}
	for _, r := range []rune{0x0131, 0x017F, 0x00B5, 0x03C2, 0x10428} {
		if !have[r] {
			t.Errorf("%U missing", r)
		}
	}
	if len(d) < 217 {
		t.Errorf("%d disagreements, want at least the 217 of the BMP", len(d))
	}
}
