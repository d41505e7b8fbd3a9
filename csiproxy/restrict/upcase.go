package restrict

import (
	"sort"
	"strings"
	"unicode"
)

// NTFS compares names by its volume's upper-case table ($UpCase): each
// UTF-16 code unit is replaced by one code unit, nothing else (no full
// case folding: ß stays ß; a surrogate, and so every character outside
// the Basic Multilingual Plane, stays itself). The table Windows 8 and
// later write is Unicode's simple upper-case mapping of the BMP less the
// characters below, which it leaves as they are although Unicode maps
// them: the table is older than the Unicode versions that added some of
// these pairs, and for the rest Windows keeps a letter and its symbol
// variant apart (ı is not I, ſ is not S, ϐ is not Β). Go's unicode.ToUpper
// maps all of them, so a comparison by it takes C:\var\lıb\kubelet to be
// C:\var\lib\kubelet, which NTFS holds to be another directory.
//
// hostmodel.Upper is the same table read from a volume ntfs-3g's mkntfs
// formatted (a different derivation; TestUpperIsNTFSs compares the two on
// every code unit and both with the table's checksum).

// keptRange is a run of code points NTFS does not upper-case, every step-th
// from lo to hi.
type keptRange struct{ lo, hi, step rune }

// keptByNTFS are the BMP code points Unicode upper-cases and $UpCase does
// not, in order.
var keptByNTFS = []keptRange{
	{0x00B5, 0x00B5, 1}, // micro sign (Unicode: Greek capital mu)
	{0x0131, 0x0131, 1}, // dotless i (Unicode: I)
	{0x017F, 0x017F, 1}, // long s (Unicode: S)
	{0x01C5, 0x01CB, 3}, // title-case digraphs Dž Lj Nj
	{0x01F2, 0x01F2, 1}, // title-case Dz
	{0x023F, 0x0240, 1}, // IPA and Latin letters given capitals after the table
	{0x0252, 0x0252, 1},
	{0x025C, 0x025C, 1},
	{0x0261, 0x0261, 1},
	{0x0265, 0x0266, 1},
	{0x026A, 0x026A, 1},
	{0x026C, 0x026C, 1},
	{0x0282, 0x0282, 1},
	{0x0287, 0x0287, 1},
	{0x029D, 0x029E, 1},
	{0x0345, 0x0345, 1}, // combining ypogegrammeni (Unicode: Ι)
	{0x03C2, 0x03C2, 1}, // final sigma (Unicode: Σ)
	{0x03D0, 0x03D1, 1}, // Greek symbols: beta, theta
	{0x03D5, 0x03D6, 1}, // phi, pi
	{0x03F0, 0x03F1, 1}, // kappa, rho
	{0x03F3, 0x03F3, 1}, // yot
	{0x03F5, 0x03F5, 1}, // lunate epsilon
	{0x0525, 0x052F, 2}, // Cyrillic supplement
	{0x10D0, 0x10FA, 1}, // Georgian Mkhedruli (capitals: Unicode 11)
	{0x10FD, 0x10FF, 1},
	{0x13F8, 0x13FD, 1}, // Cherokee small letters
	{0x1C80, 0x1C88, 1}, // Cyrillic extended-C
	{0x1D8E, 0x1D8E, 1},
	{0x1E9B, 0x1E9B, 1}, // long s with dot above
	{0x1FBE, 0x1FBE, 1}, // Greek prosgegrammeni
	{0x2C5F, 0x2C5F, 1}, // Glagolitic
	{0x2CEC, 0x2CEE, 2}, // Coptic
	{0x2CF3, 0x2CF3, 1},
	{0x2D27, 0x2D27, 1}, // Georgian supplement
	{0x2D2D, 0x2D2D, 1},
	{0xA661, 0xA661, 1}, // Cyrillic extended-B
	{0xA699, 0xA69B, 2},
	{0xA791, 0xA791, 1}, // Latin extended-D
	{0xA793, 0xA794, 1},
	{0xA797, 0xA7A9, 2},
	{0xA7B5, 0xA7C3, 2},
	{0xA7C8, 0xA7CA, 2},
	{0xA7D1, 0xA7D1, 1},
	{0xA7D7, 0xA7D9, 2},
	{0xA7F6, 0xA7F6, 1},
	{0xAB53, 0xAB53, 1},
	{0xAB70, 0xABBF, 1}, // Cherokee small letters
}

// keptByNTFSAt reports whether NTFS leaves r as it is although Unicode
// upper-cases it.
func keptByNTFSAt(r rune) bool {
	i := sort.Search(len(keptByNTFS), func(i int) bool { return keptByNTFS[i].hi >= r })
	if i == len(keptByNTFS) {
		return false
	}
	k := keptByNTFS[i]
	return r >= k.lo && (r-k.lo)%k.step == 0
}

// UpperNTFS is the character NTFS compares r by.
func UpperNTFS(r rune) rune {
	if r > 0xFFFF || (r >= 0xD800 && r <= 0xDFFF) || keptByNTFSAt(r) {
		return r
	}
	if u := unicode.ToUpper(r); u <= 0xFFFF {
		return u
	}
	return r
}

// upper is the key NTFS compares names by.
func upper(s string) string { return strings.Map(UpperNTFS, s) }

// DisagreeWithUnicode lists every character Go's unicode.ToUpper maps
// differently from NTFS: the BMP ones NTFS keeps, and the characters
// outside the BMP Unicode upper-cases. The fuzz corpora start from them.
func DisagreeWithUnicode() []rune {
	var out []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		if unicode.ToUpper(r) != UpperNTFS(r) {
			out = append(out, r)
		}
	}
	return out
}
