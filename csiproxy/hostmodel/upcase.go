package hostmodel

import (
	_ "embed"
	"strconv"
	"strings"
)

// ntfsUpcase is the $UpCase table of an NTFS volume as Windows 8 and later
// write it, read from a volume ntfs-3g's mkntfs formatted
// (ntfs-upcase.txt says how): the code unit NTFS compares each UTF-16 code
// unit by.
//
//go:embed ntfs-upcase.txt
var ntfsUpcaseText string

// upcase is the table, one entry per UTF-16 code unit.
var upcase = func() *[65536]uint16 {
	var t [65536]uint16
	for i := range t {
		t[i] = uint16(i)
	}
	for _, line := range strings.Split(ntfsUpcaseText, "\n") {
		from, to, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		f, err1 := strconv.ParseUint(from, 16, 16)
		u, err2 := strconv.ParseUint(to, 16, 16)
		if err1 != nil || err2 != nil {
			panic("hostmodel: bad line in ntfs-upcase.txt: " + line)
		}
		t[f] = uint16(u)
	}
	return &t
}()

// Upper is the key NTFS compares names by: every UTF-16 code unit through
// the volume's upper-case table. A character outside the Basic
// Multilingual Plane is two surrogates, which the table keeps, so it is
// never changed; nor are the characters the table leaves alone although
// Unicode upper-cases them (ı, ſ, µ, ϐ, ...). The Kelvin sign is not K.
func Upper(s string) string {
	return strings.Map(func(r rune) rune {
		if r > 0xFFFF {
			return r
		}
		return rune(upcase[r])
	}, s)
}
