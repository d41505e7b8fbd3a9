package hostmodel

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"testing"
)

// TestUpcaseTableChecksum: the table is, byte for byte, the $UpCase
// Windows 8 and later write (the checksum ntfs-3g records for it).
func TestUpcaseTableChecksum(t *testing.T) {
	b := make([]byte, 2*len(upcase))
	for i, u := range upcase {
		binary.LittleEndian.PutUint16(b[2*i:], u)
	}
	sum := md5.Sum(b)
	if got := hex.EncodeToString(sum[:]); got != "7ff498a44e45e77374cc7c962b1b92f2" {
		t.Fatalf("$UpCase MD5 %s, want Windows 8's 7ff498a44e45e77374cc7c962b1b92f2", got)
	}
}

// TestUpperKeepsWhatNTFSKeeps pins the characters Go's Unicode tables
// upper-case and NTFS does not (the dotless i and long s among
// them), and the ones both map.
func TestUpperKeepsWhatNTFSKeeps(t *testing.T) {
	for in, want := range map[string]string{
		"l\u0131b": "L\u0131B", "pod\u017f": "POD\u017f", "\u00b5": "\u00b5", "\u03c2": "\u03c2",
		"\u212aubelet": "\u212aUBELET", "\U00010428": "\U00010428", "\u00ff": "\u0178", "\u00e9": "\u00c9",
		"stra\u00dfe": "STRA\u00dfE", "\uff4c": "\uff2c", "\u0130": "\u0130",
	} {
		if got := Upper(in); got != want {
			t.Errorf("Upper(%q) = %q, want %q", in, got, want)
		}
	}
}
