package main

import (
	"fmt"
	"strings"
)

// kvFlag is a repeatable key=value flag.
type kvFlag map[string]string

func (f kvFlag) String() string {
	var parts []string
	for k := range f {
		parts = append(parts, k+"=…")
	}
	return strings.Join(parts, ",")
}

func (f kvFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", s)
	}
	f[k] = v
	return nil
}

// listFlag is a repeatable string flag.
type listFlag []string

func (f *listFlag) String() string { return strings.Join(*f, ",") }

func (f *listFlag) Set(s string) error {
	*f = append(*f, s)
	return nil
}
