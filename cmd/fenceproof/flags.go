package main

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
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

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// helpOrUsageError is the exit code of a command that printed its usage
// because its arguments did not name what to do: 0 when they asked for
// help (-h, --help), 2 otherwise.
func helpOrUsageError(args []string) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		return 0
	}
	return 2
}

// kvFlag is a repeatable key=value flag bound to a map: the first value
// given replaces what the map held (defaults, a config file), the next ones
// add to it.
type kvFlag struct {
	m   *map[string]string
	set bool
}

func (f *kvFlag) String() string {
	if f.m == nil {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(*f.m)) {
		parts = append(parts, k+"=…")
	}
	return strings.Join(parts, ",")
}

func (f *kvFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", s)
	}
	if !f.set {
		*f.m, f.set = map[string]string{}, true
	}
	(*f.m)[k] = v
	return nil
}

// listFlag is a repeatable string flag.
type listFlag []string

func (f *listFlag) String() string { return strings.Join(*f, ",") }

func (f *listFlag) Set(s string) error {
	*f = append(*f, s)
	return nil
}
