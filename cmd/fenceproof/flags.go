package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

// parseFlags parses a subcommand's flags and takes no arguments. When ok is
// false the subcommand returns code: 0 after --help, 2 after a bad flag or
// an argument (named on standard error).
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "fenceproof %s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return 2, false
	}
	return 0, true
}

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
